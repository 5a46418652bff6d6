import type pg from 'pg';
import WebSocket from 'ws';
import { generateToken } from '../adapters/postgres/tokens.ts';
import { CONSENT_CATEGORIES } from '../machines/memory/memory.port.ts';
import { loadConfig } from '../runtime/config.ts';
import { createLogger } from '../runtime/logger.ts';
import { startRuntime, type Runtime } from '../runtime/runtime.ts';
import { percentile } from './support/stats.ts';
import { docComment, exitOnHelp } from '../runtime/cli/usage.ts';

exitOnHelp(() => docComment(import.meta.url));

/**
 * bench:start-flood — what one kiosk token flooding `session.start` does to every other senior.
 * One runtime (embedded PGlite, in this process), two phases of the same length:
 * a baseline where other seniors start sessions one after another (a fresh socket each, every
 * PROBE_EVERY_MS), then the same while FLOOD_SOCKETS sockets on one token send `session.start`
 * every 50 ms each — 20 frames a second, within the per-socket frame limit. Reported per phase: the
 * other seniors' `session.start → session.ready` and an admin read's latency (p50/p95/max), the
 * database queries, what the flooder got; and the database round trips of one start, counted on
 * the pool. Ids and counts only.
 *   npm run bench:start-flood      (BENCH_FLOOD_SOCKETS=20 BENCH_SECONDS=10)
 */
const FLOOD_SOCKETS = Number(process.env.BENCH_FLOOD_SOCKETS ?? 20);
const SECONDS = Number(process.env.BENCH_SECONDS ?? 10);
const PROBE_EVERY_MS = 250;
const FLOOD_EVERY_MS = 50;
const ADMIN_TOKEN = 'admin_bench_start_flood_000000';

/** Counts every query through the pool: `pool.query` and checked-out clients' (pool.connect + client.query). */
class QueryCounter {
  count = 0;
  private readonly wrapped = new WeakSet<object>();
  constructor(pool: pg.Pool) {
    const connect = pool.connect.bind(pool) as (...args: unknown[]) => unknown;
    (pool as unknown as { connect: unknown }).connect = (cb?: (err: Error | undefined, client: pg.PoolClient, done: unknown) => void) => {
      if (!cb) return (connect() as Promise<pg.PoolClient>).then((client) => this.wrap(client));
      return connect((err: Error | undefined, client: pg.PoolClient, done: unknown) => {
        if (!err) this.wrap(client);
        cb(err, client, done);
      });
    };
  }
  private wrap(client: pg.PoolClient): pg.PoolClient {
    if (this.wrapped.has(client)) return client;
    this.wrapped.add(client);
    const query = client.query.bind(client) as (...args: unknown[]) => unknown;
    (client as unknown as { query: unknown }).query = (...args: unknown[]) => {
      this.count += 1;
      return query(...args);
    };
    return client;
  }
}

interface Senior {
  id: string;
  token: string;
}

async function senior(rt: Runtime, name: string): Promise<Senior> {
  const id = await rt.directory.createSenior({ displayName: name, preferredName: name, onboardingDone: true });
  for (const c of CONSENT_CATEGORIES) await rt.consents.grant(id, c);
  const token = generateToken('kiosk');
  await rt.directory.addDevice(id, token);
  return { id, token };
}

/** A socket on `token`; rejects with the HTTP status of a refused upgrade. */
function open(rt: Runtime, token: string): Promise<WebSocket> {
  const ws = new WebSocket(`${rt.url.replace('http', 'ws')}/v1/kiosk`, { headers: { authorization: `Bearer ${token}` } });
  return new Promise((resolve, reject) => {
    ws.once('open', () => resolve(ws));
    ws.once('unexpected-response', (req, res) => {
      req.destroy();
      reject(new Error(`HTTP ${res.statusCode}`));
    });
    ws.once('error', reject);
  });
}

/** `session.start → session.ready` on a fresh socket, in ms (the socket is opened first, not timed). */
async function timedStart(rt: Runtime, s: Senior): Promise<number> {
  const ws = await open(rt, s.token);
  const t0 = performance.now();
  const ready = new Promise<number>((resolve, reject) => {
    ws.on('message', (raw) => {
      const f = JSON.parse(raw.toString()) as { type: string };
      if (f.type === 'session.ready') resolve(performance.now() - t0);
    });
    ws.once('close', (code) => reject(new Error(`closed ${code} before session.ready`)));
  });
  ws.send(JSON.stringify({ type: 'session.start' }));
  try {
    return await ready;
  } finally {
    ws.close();
  }
}

async function timedAdminRead(rt: Runtime, s: Senior): Promise<number> {
  const t0 = performance.now();
  const res = await fetch(`${rt.url}/v1/admin/seniors/${s.id}/consents`, { headers: { authorization: `Bearer ${ADMIN_TOKEN}` } });
  await res.arrayBuffer();
  if (res.status !== 200) throw new Error(`admin read: HTTP ${res.status}`);
  return performance.now() - t0;
}

interface FloodFigures {
  sockets: number;
  refused429: number;
  startsSent: number;
  ready: number;
  startRateLimited: number;
  replaced: number;
  closed1011: number;
}

/** FLOOD_SOCKETS sockets on one token, each sending session.start every FLOOD_EVERY_MS until `stop`. */
async function flood(rt: Runtime, s: Senior, stop: Promise<void>): Promise<FloodFigures> {
  const figures: FloodFigures = { sockets: 0, refused429: 0, startsSent: 0, ready: 0, startRateLimited: 0, replaced: 0, closed1011: 0 };
  const sockets: WebSocket[] = [];
  await Promise.all(
    Array.from({ length: FLOOD_SOCKETS }, async () => {
      try {
        const ws = await open(rt, s.token);
        figures.sockets += 1;
        sockets.push(ws);
        ws.on('message', (raw) => {
          const f = JSON.parse(raw.toString()) as { type: string; code?: string; reason?: string };
          if (f.type === 'session.ready') figures.ready += 1;
          else if (f.type === 'error' && f.code === 'start_rate_limited') figures.startRateLimited += 1;
          else if (f.type === 'session.closed' && f.reason === 'replaced') figures.replaced += 1;
        });
        ws.on('close', (code) => {
          if (code === 1011) figures.closed1011 += 1;
        });
      } catch (err) {
        if ((err as Error).message === 'HTTP 429') figures.refused429 += 1;
        else throw err;
      }
    }),
  );
  const timer = setInterval(() => {
    for (const ws of sockets) {
      if (ws.readyState !== ws.OPEN) continue;
      ws.send(JSON.stringify({ type: 'session.start' }));
      figures.startsSent += 1;
    }
  }, FLOOD_EVERY_MS);
  await stop;
  clearInterval(timer);
  for (const ws of sockets) ws.terminate();
  return figures;
}

interface Phase {
  starts: number[];
  failedStarts: number;
  reads: number[];
  queries: number;
  flood: FloodFigures | null;
}

async function phase(rt: Runtime, counter: QueryCounter, others: Senior[], flooder: Senior | null): Promise<Phase> {
  const q0 = counter.count;
  let stopFlood!: () => void;
  const stop = new Promise<void>((resolve) => (stopFlood = resolve));
  const flooding = flooder ? flood(rt, flooder, stop) : Promise.resolve(null);
  const starts: number[] = [];
  const reads: number[] = [];
  let failedStarts = 0;
  const probes: Promise<void>[] = [];
  const end = performance.now() + SECONDS * 1000;
  for (let i = 0; performance.now() < end; i++) {
    const s = others[i % others.length]!;
    probes.push(
      timedStart(rt, s).then(
        (ms) => void starts.push(ms),
        () => void (failedStarts += 1),
      ),
      timedAdminRead(rt, s).then((ms) => void reads.push(ms)),
    );
    await new Promise((r) => setTimeout(r, PROBE_EVERY_MS));
  }
  stopFlood();
  const floodFigures = await flooding;
  await Promise.all(probes);
  return { starts, failedStarts, reads, queries: counter.count - q0, flood: floodFigures };
}

/** Queries one start costs, counted alone on a quiet runtime: a fresh one, a takeover, a resume. */
async function roundTrips(rt: Runtime, counter: QueryCounter, s: Senior): Promise<{ fresh: number; takeover: number; resume: number }> {
  const measure = async (resume: boolean, keep: WebSocket | null) => {
    const ws = await open(rt, s.token);
    const q0 = counter.count;
    await new Promise<void>((resolve) => {
      ws.on('message', (raw) => {
        if ((JSON.parse(raw.toString()) as { type: string }).type === 'session.ready') resolve();
      });
      ws.send(JSON.stringify({ type: 'session.start', resume }));
    });
    // What the start set off (the replaced session's presence release) lands within a few ms.
    await new Promise((r) => setTimeout(r, 200));
    keep?.terminate();
    return { ws, queries: counter.count - q0 };
  };
  const first = await measure(false, null);
  const second = await measure(false, first.ws);
  const third = await measure(true, second.ws);
  third.ws.terminate();
  return { fresh: first.queries, takeover: second.queries, resume: third.queries };
}

const config = loadConfig({ KOHAMI_ENV: 'test', PORT: '0', PGLITE_DATA_DIR: 'memory://', LOG_LEVEL: 'silent', DEV_ADMIN_TOKEN: ADMIN_TOKEN, PRESENCE_HEARTBEAT_MS: '600000' });
const rt = await startRuntime(config, { logger: createLogger('silent') });
const counter = new QueryCounter(rt.db.pool);
const others = await Promise.all(Array.from({ length: 10 }, (_, i) => senior(rt, `Autre${i}`)));
const flooder = await senior(rt, 'Inondation');
const trips = await roundTrips(rt, counter, await senior(rt, 'Compte'));
const baseline = await phase(rt, counter, others, null);
const flooded = await phase(rt, counter, others, flooder);
await rt.close();

const f = (xs: number[], p: number) => (xs.length ? `${percentile(xs, p).toFixed(0)} ms` : '—');
const max = (xs: number[]) => (xs.length ? `${Math.max(...xs).toFixed(0)} ms` : '—');
console.log(`\nbench:start-flood — ${FLOOD_SOCKETS} sockets on one token, each sending session.start every ${FLOOD_EVERY_MS} ms (within the per-socket limit), ${SECONDS} s; other seniors start one every ${PROBE_EVERY_MS} ms; node ${process.version}\n`);
console.log(`DB round trips per start (quiet): fresh ${trips.fresh}, takeover of a live session ${trips.takeover}, resume ${trips.resume}\n`);
console.log('| phase | other seniors\' starts | start p50 | start p95 | start max | failed | admin read p50 | p95 | max | DB queries | flooder: sockets / 429 / starts sent / ready / start_rate_limited / replaced / 1011 |');
console.log('|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---|');
for (const [name, p] of [['baseline (no flood)', baseline], ['flood', flooded]] as const) {
  const fl = p.flood ? `${p.flood.sockets} / ${p.flood.refused429} / ${p.flood.startsSent} / ${p.flood.ready} / ${p.flood.startRateLimited} / ${p.flood.replaced} / ${p.flood.closed1011}` : '—';
  console.log(`| ${name} | ${p.starts.length} | ${f(p.starts, 50)} | ${f(p.starts, 95)} | ${max(p.starts)} | ${p.failedStarts} | ${f(p.reads, 50)} | ${f(p.reads, 95)} | ${max(p.reads)} | ${p.queries} | ${fl} |`);
}
const ratio = (a: number[], b: number[], p: number) => (a.length && b.length ? `${(percentile(b, p) / percentile(a, p)).toFixed(1)}×` : '—');
console.log(`\nflood / baseline: start p50 ${ratio(baseline.starts, flooded.starts, 50)}, p95 ${ratio(baseline.starts, flooded.starts, 95)}; admin read p95 ${ratio(baseline.reads, flooded.reads, 95)}`);
process.exit(0);
