// Embedded PGlite in its own thread, served over the Postgres wire protocol on a Unix socket
// (`pglite-thread.ts` says why never on TCP: PGlite lets in any login as superuser).
// PGlite executes queries synchronously in WASM; here that time is spent off the event loop
// that answers kiosks (one insert under the HNSW index takes ~13 ms).
// Plain JavaScript: written when a worker thread (Node 20) could not load TypeScript; it needs no types.
//
// PGlite is ONE Postgres session, shared by every connection (the runtime's pool, and the
// commands run while the runtime is up). @electric-sql/pglite-socket queues single wire
// messages: when an extended-protocol exchange arrives in several socket reads (a large bind),
// another connection's Parse/Bind/Sync runs in the middle of it, and a Bind meant for one
// statement binds the other's. So this server hands the session to one connection at a time,
// from one of its messages until PGlite answers ReadyForQuery "idle": a whole simple query,
// a whole extended exchange up to Sync, a whole transaction. Nothing else runs meanwhile.
import { PGlite } from '@electric-sql/pglite';
import { vector } from '@electric-sql/pglite-pgvector';
import { chmodSync, readdirSync, readFileSync, unlinkSync } from 'node:fs';
import { writeFile } from 'node:fs/promises';
import net from 'node:net';
import path from 'node:path';
import { parentPort, workerData } from 'node:worker_threads';

/** A connection that keeps the session (open transaction or exchange) and sends nothing this long is cut and rolled back. */
const IDLE_OWNER_MS = workerData.idleOwnerMs ?? 10_000;
/** PGLITE_MAX_MESSAGE_BYTES (pglite-thread.ts); a startup packet's bound is PostgreSQL's own (MAX_STARTUP_PACKET_LENGTH). */
const MAX_MESSAGE_BYTES = workerData.maxMessageBytes;
const MAX_STARTUP_BYTES = 10_000;
/** How long a connection refused with a last message has to take it before its socket is destroyed anyway. */
const FAREWELL_MS = 1000;
const SSL_REQUEST = 80877103;
const GSSENC_REQUEST = 80877104;
const PROTOCOL_3 = 196608;
const READY_FOR_QUERY = 0x5a; // 'Z'
const NOTIFICATION = 0x41; // 'A'
const QUERY = 0x51; // 'Q'
const PARSE = 0x50; // 'P'
const TERMINATE = 0x58; // 'X'
const SYNC = Buffer.from([0x53, 0, 0, 0, 4]);
const ROLLBACK = simpleQuery('ROLLBACK');

// PGlite's shared buffers live in its WebAssembly memory and count in this process's RSS once touched
// (a first start's initdb touches them all: 128 MiB at PostgreSQL's default). Past them, pages are
// read from the files, through the OS page cache (pglite-thread.ts: PGLITE_SHARED_BUFFERS_MB).
// wal_recycle off: a WAL segment the checkpoint retires is removed, not renamed for reuse with the
// rows it logged still in it (an erasure's purge relies on it: runtime/jobs/erasure-purge.ts).
// A new database may start from an image (`dump` below wrote it): its cluster is unpacked instead
// of running initdb, several times slower (pglite-thread.ts passes one only when there is no cluster).

/**
 * Bytes already read, as the Blob PGlite's loadDataDir takes: arrayBuffer() hands them over as they
 * are. Node's own Blob copies them in and streams them back out in chunks it then joins: for the test
 * run's 40 MB image, ~0.5 s of CPU a database against ~0.1 s to read the file.
 */
class BytesBlob extends Blob {
  #bytes;
  constructor(bytes) {
    super();
    this.#bytes = bytes;
  }
  get size() {
    return this.#bytes.byteLength;
  }
  arrayBuffer() {
    const b = this.#bytes;
    return Promise.resolve(b.byteOffset === 0 && b.byteLength === b.buffer.byteLength ? b.buffer : b.buffer.slice(b.byteOffset, b.byteOffset + b.byteLength));
  }
}
const db = await PGlite.create({
  dataDir: workerData.dataDir,
  pgliteWasmModule: workerData.engine,
  ...(workerData.image ? { loadDataDir: new BytesBlob(readFileSync(workerData.image)) } : {}),
  extensions: { vector },
  startParams: [...PGlite.defaultStartParams, '-c', `shared_buffers=${workerData.sharedBuffersMb}MB`, '-c', 'wal_recycle=off'],
});
// PGlite's initdb leaves its files 0666 (set explicitly, whatever the umask), and an older version of
// this runtime left the directory 0755: every file becomes 0600 and every directory 0700 before anyone
// is served. Symbolic links (a tablespace's) are not followed: what they point to is not ours to change.
if (!workerData.dataDir.startsWith('memory://')) ownerOnly(workerData.dataDir);

function ownerOnly(dir) {
  chmodSync(dir, 0o700);
  for (const entry of readdirSync(dir, { withFileTypes: true })) {
    const file = path.join(dir, entry.name);
    try {
      if (entry.isDirectory()) ownerOnly(file);
      else if (!entry.isSymbolicLink()) chmodSync(file, 0o600);
    } catch (err) {
      // Gone meanwhile: another process's lock attempt removes its staged record at once.
      if (err.code !== 'ENOENT') throw err;
    }
  }
}

let owner = null;
const waiting = [];
const connections = new Set();

function acquire(conn) {
  if (owner === null) owner = conn;
  if (owner === conn) return undefined;
  return new Promise((resolve) => waiting.push({ conn, resolve }));
}

function release(conn) {
  if (owner !== conn) return;
  const next = waiting.shift();
  owner = next ? next.conn : null;
  next?.resolve();
}

/** Runs client messages; returns the status of the last ReadyForQuery in PGlite's answer, or null. */
async function exec(message, write) {
  const ready = readyWatcher();
  try {
    await db.runExclusive(() =>
      db.execProtocolRawStream(message, {
        onRawData: (chunk) => {
          ready.feed(chunk);
          write(chunk);
        },
      }),
    );
  } catch (err) {
    // PGlite answers SQL errors on the wire; a throw here means the engine itself broke.
    // Let the thread die with it: the runtime is told, and no query waits forever.
    setImmediate(() => {
      throw err;
    });
    await new Promise(() => {});
  }
  return ready.status;
}

/** Follows the backend's message frames across output chunks and keeps the last ReadyForQuery status. */
function readyWatcher() {
  const header = Buffer.alloc(5);
  let have = 0;
  let left = 0;
  const watcher = {
    status: null,
    feed(chunk) {
      let i = 0;
      while (i < chunk.length) {
        if (have < 5) {
          const n = Math.min(5 - have, chunk.length - i);
          header.set(chunk.subarray(i, i + n), have);
          have += n;
          i += n;
          if (have === 5) {
            left = header.readInt32BE(1) - 4;
            if (left === 0) have = 0;
          }
          continue;
        }
        if (header[0] === READY_FOR_QUERY) watcher.status = String.fromCharCode(chunk[i]);
        const n = Math.min(left, chunk.length - i);
        left -= n;
        i += n;
        if (left === 0) have = 0;
      }
    },
  };
  return watcher;
}

/** A backend's ErrorResponse of severity FATAL. */
function fatal(code, text) {
  const fields = Buffer.from(`SFATAL\0VFATAL\0C${code}\0M${text}\0\0`);
  const message = Buffer.alloc(5 + fields.length);
  message[0] = 0x45; // 'E'
  message.writeInt32BE(4 + fields.length, 1);
  fields.copy(message, 5);
  return message;
}

function simpleQuery(sql) {
  const text = Buffer.from(`${sql}\0`);
  const message = Buffer.alloc(5 + text.length);
  message[0] = 0x51; // 'Q'
  message.writeInt32BE(4 + text.length, 1);
  text.copy(message, 5);
  return message;
}

/**
 * Ends what a departed client left open, as a real backend's exit would: ROLLBACK aborts an
 * explicit or implicit transaction (it is skipped if an error left the exchange waiting for
 * Sync), Sync ends any exchange, a last ROLLBACK ends a transaction block the first missed.
 */
async function resetSession() {
  const discard = () => {};
  await exec(ROLLBACK, discard);
  if ((await exec(SYNC, discard)) !== 'I') await exec(ROLLBACK, discard);
}

async function run(conn, message) {
  if (conn.closed) return;
  clearTimeout(conn.idle);
  await acquire(conn);
  // A connection closed while it waited keeps the session only until its reset, queued after this.
  if (conn.closed) return;
  // PGlite hands out views of its WASM memory, which its next output reuses: a socket that could not
  // take one at once would send bytes overwritten meanwhile. Each is copied, and the exchange's
  // answer leaves in one socket write once PGlite is done (one wake-up of the reader, not one per chunk).
  const out = [];
  const listening = noteListens(conn, message);
  const status = await exec(message, (chunk) => out.push(Buffer.from(chunk)));
  // An UNLISTEN went to the one session: it listens again for the channels other connections still want.
  if (listening === 'unlisten') for (const channel of wantedChannels()) await exec(simpleQuery(`LISTEN "${channel.replaceAll('"', '""')}"`), () => {});
  let answer = out.length === 1 ? out[0] : Buffer.concat(out);
  if (listeners() > 0) answer = routeNotifications(conn, answer);
  if (!conn.socket.destroyed && answer.length > 0) conn.socket.write(answer);
  if (status === 'I') release(conn);
  else if (owner === conn) conn.idle = setTimeout(() => close(conn), IDLE_OWNER_MS);
}

/** A `LISTEN ch` or `UNLISTEN ch|*` statement: the channel as PostgreSQL names it (unquoted folds to lower case). */
const LISTEN_SQL = /^\s*(UN)?LISTEN\s+(?:"((?:[^"]|"")+)"|([A-Za-z_][\w$]*)|(\*))\s*;?\s*$/i;

/** The statements of a batch of client messages (simple queries and Parse messages). */
function statements(message) {
  const found = [];
  for (let i = 0; i + 5 <= message.length; ) {
    const type = message[i];
    const length = message.readInt32BE(i + 1);
    if (length < 4) break; // not a typed message (the startup packet): no statement in it
    const body = message.subarray(i + 5, i + 1 + length);
    if (type === QUERY) found.push(body.subarray(0, body.indexOf(0)).toString());
    else if (type === PARSE) {
      const nameEnd = body.indexOf(0);
      found.push(body.subarray(nameEnd + 1, body.indexOf(0, nameEnd + 1)).toString());
    }
    i += 1 + length;
  }
  return found;
}

/** Records the channels the connection starts or stops listening on; 'unlisten' when it stopped any. */
function noteListens(conn, message) {
  // A cheap look first: most batches name no LISTEN at all (the startup packet, binds of large rows).
  if (!message.includes('LISTEN') && !message.includes('listen')) return null;
  let result = null;
  for (const sql of statements(message)) {
    const m = LISTEN_SQL.exec(sql);
    if (!m) continue;
    const channel = m[2] !== undefined ? m[2].replaceAll('""', '"') : m[3]?.toLowerCase();
    if (!m[1]) conn.channels.add(channel);
    else {
      if (m[4]) conn.channels.clear();
      else conn.channels.delete(channel);
      result = 'unlisten';
    }
  }
  return result;
}

function listeners() {
  let n = 0;
  for (const conn of connections) n += conn.channels.size;
  return n;
}

function wantedChannels() {
  const wanted = new Set();
  for (const conn of connections) for (const channel of conn.channels) wanted.add(channel);
  return wanted;
}

/**
 * Takes the NotificationResponses out of an exchange's answer and gives each to the connections
 * listening on its channel (the running one keeps those of its own channels). Between two of a
 * listener's messages, so the listener reads it whole, as an asynchronous message.
 */
function routeNotifications(owner, answer) {
  const kept = [];
  let from = 0;
  let i = 0;
  while (i + 5 <= answer.length) {
    const end = i + 1 + answer.readInt32BE(i + 1);
    if (end <= i + 4) break;
    if (answer[i] === NOTIFICATION) {
      const note = answer.subarray(i, end);
      const channelStart = i + 9;
      const channel = answer.subarray(channelStart, answer.indexOf(0, channelStart)).toString();
      if (from < i) kept.push(answer.subarray(from, i));
      if (owner.channels.has(channel)) kept.push(note);
      for (const conn of connections) {
        if (conn !== owner && conn.channels.has(channel) && !conn.socket.destroyed) conn.socket.write(Buffer.from(note));
      }
      from = end;
    }
    i = end;
  }
  if (from === 0) return answer;
  if (from < answer.length) kept.push(answer.subarray(from));
  return Buffer.concat(kept);
}

async function abandon(conn) {
  if (owner !== conn) return;
  await resetSession();
  release(conn);
}

/** `farewell`: a last message to flush before the socket goes (a fatal error the client can read). */
function close(conn, farewell) {
  if (conn.closed) return;
  conn.closed = true;
  clearTimeout(conn.idle);
  if (farewell) {
    conn.socket.end(farewell, () => conn.socket.destroy());
    // A peer that reads nothing more does not hold the socket (nor the thread) open.
    setTimeout(() => conn.socket.destroy(), FAREWELL_MS).unref();
  } else conn.socket.destroy();
  connections.delete(conn);
  conn.chain = conn.chain.then(() => abandon(conn));
}

/** How many bytes the connection's next message needs in all, once its length has arrived (else 0). */
function awaitedBytes(conn) {
  const typed = conn.started ? 1 : 0;
  return conn.buffer.length < typed + 4 ? 0 : typed + conn.buffer.readInt32BE(typed);
}

/** The next whole message in the connection's buffer, or null. */
function take(conn) {
  const buffer = conn.buffer;
  const typed = conn.started ? 1 : 0;
  if (buffer.length < typed + 4) return null;
  const length = typed + buffer.readInt32BE(typed);
  if (length < typed + 4) throw new Error('malformed message length');
  if (buffer.length < length) return null;
  conn.buffer = buffer.subarray(length);
  return buffer.subarray(0, length);
}

/**
 * Every whole message that arrived together runs as one batch: a query's Parse, Bind, Describe,
 * Execute and Sync (one write from the client) cost one call into PGlite, which loops over the
 * messages of its input, and one sync to the file system, instead of five of each.
 */
function receive(conn, data) {
  // A large message comes in many reads: they are kept apart until it is whole, then joined once
  // (joining at each read copied a 10 MB bind ~160 times).
  conn.parts.push(data);
  conn.partsBytes += data.length;
  if (conn.partsBytes < conn.awaited) return;
  conn.buffer = conn.parts.length === 1 ? conn.parts[0] : Buffer.concat(conn.parts, conn.partsBytes);
  const batch = [];
  for (let message = take(conn); message && !conn.closed; message = take(conn)) {
    if (conn.started) {
      if (message[0] === TERMINATE) close(conn);
      else batch.push(message);
      continue;
    }
    const code = message.length >= 8 ? message.readInt32BE(4) : 0;
    if (code === SSL_REQUEST || code === GSSENC_REQUEST) conn.socket.write('N');
    else if (code === PROTOCOL_3) {
      conn.started = true;
      conn.chain = conn.chain.then(() => run(conn, message));
    } else close(conn); // a cancel request (nothing to cancel in PGlite) or an unknown protocol
  }
  conn.parts = conn.buffer.length ? [conn.buffer] : [];
  conn.partsBytes = conn.buffer.length;
  conn.awaited = awaitedBytes(conn);
  // As a PostgreSQL backend does with a length past its bound: a fatal protocol error, the connection
  // closed and what it held rolled back (what arrived with it in this read is not run).
  const bound = conn.started ? MAX_MESSAGE_BYTES : MAX_STARTUP_BYTES;
  if (conn.awaited > bound) return close(conn, fatal('08P01', `invalid message length: ${conn.awaited} bytes, over the embedded database's bound of ${bound}`));
  if (batch.length === 0 || conn.closed) return;
  const messages = batch.length === 1 ? batch[0] : Buffer.concat(batch);
  conn.chain = conn.chain.then(() => run(conn, messages));
}

const server = net.createServer((socket) => {
  const conn = { socket, buffer: Buffer.alloc(0), parts: [], partsBytes: 0, awaited: 0, started: false, closed: false, chain: Promise.resolve(), idle: undefined, channels: new Set() };
  connections.add(conn);
  socket.on('data', (data) => {
    if (conn.closed) return;
    // The session's owner sending the rest of a message (a large one comes in many reads) is not idle.
    if (owner === conn) conn.idle?.refresh();
    try {
      receive(conn, data);
    } catch {
      close(conn);
    }
  });
  socket.on('error', () => close(conn));
  socket.on('close', () => close(conn));
});
// The caller holds the data directory's lock: a socket file still there is a killed owner's.
try {
  unlinkSync(workerData.socket);
} catch (err) {
  if (err.code !== 'ENOENT') throw err;
}
await new Promise((resolve, reject) => server.once('error', reject).listen(workerData.socket, resolve));
parentPort.postMessage({ type: 'ready', socket: workerData.socket });

parentPort.on('message', async (msg) => {
  if (msg.type === 'dump') return dump(msg.file);
  if (msg.type !== 'close') return;
  server.close();
  const open = [...connections];
  for (const conn of open) close(conn);
  await Promise.all(open.map((conn) => conn.chain));
  await db.close();
  // Nothing is left to keep the thread alive: it ends by itself, not terminated mid-compilation (pglite-thread.ts).
  parentPort.close();
});

/** Writes the whole cluster as an uncompressed tar (unpacking it is what a start from the image waits on). */
async function dump(file) {
  try {
    // Taken between two queries (PGlite's own query lock), never inside one.
    await writeFile(file, Buffer.from(await (await db.dumpDataDir('none')).arrayBuffer()));
    parentPort.postMessage({ type: 'dumped' });
  } catch (err) {
    parentPort.postMessage({ type: 'dump-failed', message: err.message });
  }
}
