import { once } from 'node:events';
import { mkdtemp, readdir, readFile } from 'node:fs/promises';
import { connect, type Socket } from 'node:net';
import { hostname, tmpdir } from 'node:os';
import path from 'node:path';
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { SeniorDirectory } from '../../adapters/postgres/senior-directory.ts';
import { CliError, runCommand } from '../../runtime/cli/admin.ts';
import { LOCK_FILE } from '../../runtime/db/data-dir-lock.ts';
import { openCommandDatabase, openDatabase, type Database } from '../../runtime/db/database.ts';
import { PGLITE_MAX_MESSAGE_BYTES, socketClientConfig } from '../../runtime/db/pglite-thread.ts';
import { MIGRATIONS_DIR, migrate } from '../../adapters/postgres/migrations.ts';
import { migratedDatabase } from '../support/database.ts';

let db: Awaited<ReturnType<typeof migratedDatabase>>;
beforeAll(async () => {
  db = await migratedDatabase();
});
afterAll(() => db.close());

const value = (lines: string[], prefix: string) => lines.find((l) => l.startsWith(prefix))!.slice(prefix.length);

describe('npm run cli', () => {
  it('creates a senior, a kiosk, a caregiver token, and links them', async () => {
    const senior = value(await runCommand(db.directory, ['senior:create', '--name', 'Jeanne Martin', '--preferred', 'Jeanne', '--onboarded']), 'senior: ');
    expect(await db.directory.profile(senior)).toEqual({ preferredName: 'Jeanne', isFreshSenior: false });
    const kiosk = value(await runCommand(db.directory, ['device:create', '--senior', senior]), 'kiosk token: ');
    expect(await db.directory.seniorForKioskToken(kiosk)).toBe(senior);
    const lines = await runCommand(db.directory, ['token:create', '--role', 'caregiver', '--label', 'Claire (fille)']);
    const id = value(lines, 'caregiver token id: ');
    expect(await db.directory.roleForApiToken(value(lines, 'caregiver token: '))).toEqual({ id, role: 'caregiver' });
    await runCommand(db.directory, ['caregiver:link', '--caregiver', id, '--senior', senior]);
    expect(await db.directory.isLinked(id, senior)).toBe(true);
  });

  it.each([
    [['senior:create'], '--name is required'],
    [['token:create', '--role', 'superuser', '--label', 'x'], '--role must be'],
    [['caregiver:link', '--caregiver', 'nope', '--senior', 'x'], '--caregiver must be a UUID'],
    [['device:create', '--senior', '00000000-0000-4000-8000-000000000000'], 'no senior'],
    [['frobnicate'], 'unknown command frobnicate'],
  ])('%j → a clear error', async (argv, message) => {
    await expect(runCommand(db.directory, argv)).rejects.toThrow(CliError);
    await expect(runCommand(db.directory, argv)).rejects.toThrow(message);
  });

  it('unlinks a caregiver, and revokes a token of any role while its row and links stay', async () => {
    const senior = value(await runCommand(db.directory, ['senior:create', '--name', 'Rose']), 'senior: ');
    const lines = await runCommand(db.directory, ['token:create', '--role', 'caregiver', '--label', 'Hugo (fils)']);
    const [id, token] = [value(lines, 'caregiver token id: '), value(lines, 'caregiver token: ')];
    await runCommand(db.directory, ['caregiver:link', '--caregiver', id, '--senior', senior]);
    expect(await runCommand(db.directory, ['caregiver:unlink', '--caregiver', id, '--senior', senior])).toEqual([`caregiver ${id} may no longer read senior ${senior}`]);
    expect(await db.directory.isLinked(id, senior)).toBe(false);
    await expect(runCommand(db.directory, ['caregiver:unlink', '--caregiver', id, '--senior', senior])).rejects.toThrow(`caregiver ${id} was not linked to senior ${senior}`);

    await runCommand(db.directory, ['caregiver:link', '--caregiver', id, '--senior', senior]);
    expect(await runCommand(db.directory, ['token:revoke', '--id', id])).toEqual([`token ${id} revoked`]);
    expect(await db.directory.roleForApiToken(token)).toBeNull();
    expect(await db.directory.isLinked(id, senior)).toBe(true);
    const admin = await runCommand(db.directory, ['token:create', '--role', 'admin', '--label', 'leaked']);
    await runCommand(db.directory, ['token:revoke', '--id', value(admin, 'admin token id: ')]);
    expect(await db.directory.roleForApiToken(value(admin, 'admin token: '))).toBeNull();
    await expect(runCommand(db.directory, ['token:revoke', '--id', '00000000-0000-4000-8000-000000000000'])).rejects.toThrow('no token 00000000-0000-4000-8000-000000000000');
    await expect(runCommand(db.directory, ['token:revoke'])).rejects.toThrow('--id is required');
  });

  it('refuses to link a token that is not a caregiver’s', async () => {
    const senior = value(await runCommand(db.directory, ['senior:create', '--name', 'Paul']), 'senior: ');
    const id = value(await runCommand(db.directory, ['token:create', '--role', 'operator', '--label', 'ops']), 'operator token id: ');
    await expect(runCommand(db.directory, ['caregiver:link', '--caregiver', id, '--senior', senior])).rejects.toThrow('not a caregiver token');
  });
});

/** A wire client of the embedded database, as a command run beside the runtime is. */
async function wireClient(socket: string): Promise<pg.Client> {
  const client = new pg.Client({ ...socketClientConfig(socket), user: 'postgres', database: 'postgres' });
  client.on('error', () => {});
  await client.connect();
  return client;
}

/** The raw Postgres wire protocol, to leave an exchange unfinished as a killed client does. */
const wire = {
  message(type: string, body: Buffer): Buffer {
    const header = Buffer.alloc(5);
    header.write(type, 0);
    header.writeInt32BE(body.length + 4, 1);
    return Buffer.concat([header, body]);
  },
  startup(): Buffer {
    const params = Buffer.from('user\0postgres\0database\0postgres\0\0');
    const head = Buffer.alloc(8);
    head.writeInt32BE(8 + params.length, 0);
    head.writeInt32BE(196608, 4);
    return Buffer.concat([head, params]);
  },
  /** Parse, Bind and Execute of `sql` on the unnamed statement and portal, without the Sync that would end it. */
  unsynced(sql: string): Buffer {
    return Buffer.concat([
      wire.message('P', Buffer.concat([Buffer.from(`\0${sql}\0`), Buffer.alloc(2)])),
      wire.message('B', Buffer.alloc(8)),
      wire.message('E', Buffer.alloc(5)),
    ]);
  },
  /** Connects, starts up, sends `bytes`, and resolves once the backend's answer contains `until`. */
  async leave(socketPath: string, bytes: Buffer, until: string): Promise<Socket> {
    const socket = connect(socketPath);
    let seen = '';
    const saw = (text: string) => new Promise<void>((resolve) => socket.on('data', (d) => ((seen += d.toString('latin1')), seen.includes(text) && resolve())));
    await once(socket, 'connect');
    const ready = saw('Z\0\0\0\x05I');
    socket.write(wire.startup());
    await ready;
    seen = '';
    const answered = saw(until);
    socket.write(bytes);
    await answered;
    return socket;
  },
};

describe('the embedded database while the runtime runs', () => {
  // Short, for the idle cut's own tests, yet above any pause between two statements of a migration on a
  // loaded machine: at 400 ms, load 7 cut the runtime's own migration (« Client has encountered a connection error »).
  const IDLE_OWNER_MS = 1500;
  let dir: string;
  let runtime: Database;
  let socket: string;
  const rows = async () => (await runtime.pool.query<{ x: number }>('SELECT x FROM wire_probe ORDER BY x')).rows.map((r) => r.x);

  beforeAll(async () => {
    dir = path.join(await mkdtemp(path.join(tmpdir(), 'kohami-cli-')), 'pglite');
    runtime = await openDatabase({ pgliteDataDir: dir, idleOwnerMs: IDLE_OWNER_MS });
    socket = JSON.parse(await readFile(path.join(dir, LOCK_FILE), 'utf8')).socket;
  }, 60_000);
  afterAll(() => runtime?.close());

  it('a command started before the runtime has migrated waits for it, then goes through its database', async () => {
    let opened = false;
    const command = openCommandDatabase({ pgliteDataDir: dir }, 'npm run cli').then((db) => ((opened = true), db));
    // Two of its polls: a command that did not wait for the schema would have opened by now.
    await new Promise((resolve) => setTimeout(resolve, 500));
    expect(opened).toBe(false);
    // The runtime applies every migration itself: the command migrated nothing through it.
    const migrations = (await readdir(MIGRATIONS_DIR)).filter((f) => f.endsWith('.sql'));
    expect(await migrate(runtime.pool)).toHaveLength(migrations.length);
    const db = await command;
    expect(db.via).toMatchObject({ pid: process.pid, holder: 'kohami-runtime', socket });
    expect(db.location).toBe(`${dir}, through kohami-runtime pid ${process.pid}`);
    await db.close();
    await runtime.pool.query('CREATE TABLE wire_probe (x int)');
  });

  it('two connections never interleave inside an extended-protocol exchange, even split across reads', async () => {
    const other = await wireClient(socket);
    const big = 'y'.repeat(300_000);
    const wrong: unknown[] = [];
    await Promise.all([
      (async () => {
        for (let i = 0; i < 30; i += 1) {
          const r = await other.query<{ n: number; i: number }>('SELECT length($1::text) AS n, $2::int AS i', [big, i]);
          if (r.rows[0]!.n !== big.length || r.rows[0]!.i !== i) wrong.push(r.rows[0]);
        }
      })(),
      (async () => {
        for (let i = 0; i < 600; i += 1) {
          const r = await runtime.pool.query<{ v: string }>('SELECT $1::text AS v', [`r${i}`]);
          if (r.rows[0]!.v !== `r${i}`) wrong.push(r.rows[0]);
        }
      })(),
    ]);
    expect(wrong).toEqual([]);
    await other.end();
  });

  it('one connection’s transaction neither swallows nor delays forever the other’s statements', async () => {
    const other = await wireClient(socket);
    await other.query('BEGIN');
    await other.query('INSERT INTO wire_probe VALUES (1)');
    let inserted = false;
    const insert = runtime.pool.query('INSERT INTO wire_probe VALUES (2)').then(() => (inserted = true));
    await other.query('SELECT 1');
    expect(inserted).toBe(false);
    await other.query('ROLLBACK');
    await insert;
    expect(await rows()).toEqual([2]);
    await other.end();
  });

  it('a client killed inside a transaction or an unfinished exchange leaves nothing written and the session usable', async () => {
    const killed = await wireClient(socket);
    await killed.query('BEGIN');
    await killed.query('INSERT INTO wire_probe VALUES (3)');
    (killed as unknown as { connection: { stream: Socket } }).connection.stream.destroy();
    expect(await rows()).toEqual([2]);

    (await wire.leave(socket, wire.unsynced('INSERT INTO wire_probe VALUES (4)'), 'INSERT 0 1')).destroy();
    expect(await rows()).toEqual([2]);

    (await wire.leave(socket, wire.unsynced('INSERT INTO no_such_table VALUES (5)'), 'no_such_table')).destroy();
    expect(await runtime.pool.query('SELECT $1::int AS v', [7])).toMatchObject({ rows: [{ v: 7 }] });
  });

  it('a connection idle in an open transaction is cut after idleOwnerMs: the runtime is not frozen by it, nothing crashes', async () => {
    const command = await openCommandDatabase({ pgliteDataDir: dir }, 'npm run cli');
    const idle = await command.pool.connect();
    await idle.query('BEGIN');
    await idle.query('INSERT INTO wire_probe VALUES (6)');
    await runtime.pool.query('INSERT INTO wire_probe VALUES (8)');
    expect(await rows()).toEqual([2, 8]);
    await expect(idle.query('COMMIT')).rejects.toThrow();
    idle.release(true);
    await command.close();
  });

  it('a connection in a transaction still sending a long statement, piece by piece, is not idle: never cut', async () => {
    const PIECES = 15;
    const begin = await wire.leave(socket, wire.message('Q', Buffer.from('BEGIN\0')), 'Z\0\0\0\x05T');
    // One statement whose bytes take three idle bounds to arrive, each piece well within one.
    const statement = wire.message('Q', Buffer.from(`INSERT INTO wire_probe VALUES (9) -- ${'x'.repeat(PIECES * 1000)}\0`));
    let seen = '';
    begin.on('data', (d: Buffer) => (seen += d.toString('latin1')));
    const started = performance.now();
    for (let i = 0; i < PIECES; i++) {
      begin.write(statement.subarray(Math.floor((i * statement.length) / PIECES), Math.floor(((i + 1) * statement.length) / PIECES)));
      await new Promise((resolve) => setTimeout(resolve, IDLE_OWNER_MS / 5));
    }
    expect(performance.now() - started).toBeGreaterThan(2 * IDLE_OWNER_MS);
    begin.write(wire.message('Q', Buffer.from('COMMIT\0')));
    await expect.poll(() => seen).toContain('COMMIT');
    expect(begin.destroyed).toBe(false);
    begin.destroy();
    expect(await rows()).toContain(9);
  });

  it('a message announced over the bound is refused at its header, as PostgreSQL does: a fatal protocol error, the connection closed, its transaction rolled back', async () => {
    const begin = await wire.leave(socket, wire.message('Q', Buffer.from('BEGIN; INSERT INTO wire_probe VALUES (10)\0')), 'Z\0\0\0\x05T');
    let seen = '';
    begin.on('data', (d: Buffer) => (seen += d.toString('latin1')));
    const header = Buffer.alloc(5);
    header.write('Q', 0);
    // Its length field counts itself, not the type byte: the message is one byte longer.
    header.writeInt32BE(PGLITE_MAX_MESSAGE_BYTES, 1);
    // Only its header and a first piece: the refusal does not wait for (nor keep) the rest.
    begin.write(Buffer.concat([header, Buffer.alloc(1000, 0x20)]));
    await once(begin, 'close');
    expect(seen).toMatch(/^E/);
    expect(seen).toContain('C08P01');
    expect(seen).toContain(`invalid message length: ${PGLITE_MAX_MESSAGE_BYTES + 1} bytes, over the embedded database's bound of ${PGLITE_MAX_MESSAGE_BYTES}`);
    expect(await rows()).not.toContain(10);

    // A startup packet has PostgreSQL's own bound, 10,000 bytes.
    const stranger = connect(socket);
    await once(stranger, 'connect');
    let told = '';
    stranger.on('data', (d: Buffer) => (told += d.toString('latin1')));
    const startup = Buffer.alloc(8);
    startup.writeInt32BE(10_001, 0);
    startup.writeInt32BE(196608, 4);
    stranger.write(startup);
    await once(stranger, 'close');
    expect(told).toContain('invalid message length: 10001 bytes');
    // The session lives on for everyone else.
    expect(await runtime.pool.query('SELECT $1::int AS v', [11])).toMatchObject({ rows: [{ v: 11 }] });
  });

  it('senior:create and token:create through the runtime’s database outlive the runtime', async () => {
    const command = await openCommandDatabase({ pgliteDataDir: dir }, 'npm run cli');
    const directory = new SeniorDirectory(command.pool);
    const senior = value(await runCommand(directory, ['senior:create', '--name', 'Jeanne Martin']), 'senior: ');
    const token = value(await runCommand(directory, ['token:create', '--role', 'admin', '--label', 'ops']), 'admin token: ');
    await command.close();

    await runtime.close();
    await expect(readFile(path.join(dir, LOCK_FILE))).rejects.toMatchObject({ code: 'ENOENT' });
    runtime = await openDatabase({ pgliteDataDir: dir });
    const reopened = new SeniorDirectory(runtime.pool);
    expect(await reopened.exists(senior)).toBe(true);
    expect(await reopened.roleForApiToken(token)).toMatchObject({ role: 'admin' });
  });

  it('with no runtime up, a command owns the directory for its run: a runtime or another command started meanwhile is refused', async () => {
    await runtime.close();
    const command = await openCommandDatabase({ pgliteDataDir: dir }, 'npm run cli');
    expect(command.via).toBeUndefined();
    const held = `PGLITE_DATA_DIR ${dir} is in use by npm run cli (pid ${process.pid} on host ${hostname()}, since `;
    await expect(openDatabase({ pgliteDataDir: dir })).rejects.toThrow(held);
    await expect(openCommandDatabase({ pgliteDataDir: dir }, 'npm run dream')).rejects.toThrow(/is in use by npm run cli .*: run this again once it has finished$/);
    await command.close();
    runtime = await openDatabase({ pgliteDataDir: dir });
  });
});
