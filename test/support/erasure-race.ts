import type pg from 'pg';
import { PgConsentAdapter } from '../../adapters/postgres/pg-consent.adapter.ts';
import { SeniorDirectory } from '../../adapters/postgres/senior-directory.ts';
import { generateToken } from '../../adapters/postgres/tokens.ts';
import { CONSENT_CATEGORIES } from '../../machines/memory/memory.port.ts';
import { KioskClient, type Frame } from './kiosk-client.ts';
import { ADMIN_TOKEN } from './runtime.ts';

/** Where one race runs: the kiosk's socket, the process the erasure goes through, the shared database. */
export interface RaceSides {
  kioskWs: string;
  adminUrl: string;
  pool: pg.Pool;
  /** Live session actors, summed over every process, read once the DELETE has answered. */
  liveSessions(): Promise<number>;
  /** Log lines saying a derivation failed (a foreign key, once the senior row is gone), so far. */
  derivationFailures(): number;
  /** Waits until no derivation is queued or running in any process. */
  derivationsIdle(): Promise<void>;
}

/** One trial: the start sent `offsetMs` before the DELETE (negative: after it), and what went wrong. */
export interface RaceOutcome {
  offsetMs: number;
  /** The kiosk heard session.ready (the erasure closed a session), or not (it refused the start). */
  started: boolean;
  problems: string[];
}

/** Turns the kiosk sends back to back while its session lives: a session that outlives the erasure answers them. */
const TURN_TEXTS = ['Je suis allée au marché ce matin', 'Bonjour', 'Mon fils vient dimanche'];
/** A live session's turns per trial at most: the loop never runs unbounded. */
const MAX_TURNS = 200;
/** Between a reply and the next turn: under the socket's frame rate limit (20 a second by default). */
const TURN_GAP_MS = 60;
/** Tables a derivation of the session would write to. */
const DERIVED_TABLES = ['mood_scores', 'segments', 'memory_facts', 'session_presence'];

const at = (ms: number) => new Promise((resolve) => setTimeout(resolve, Math.max(0, ms)));

/**
 * A kiosk `session.start` and `DELETE /v1/admin/seniors/:id/data` for the same new senior (every
 * consent granted), `offsetMs` apart: the race of issue 33. Once the DELETE has answered, no session
 * of the senior may live in any process; the kiosk hears `session.closed {reason: "erased"}` (a
 * refused start or a closed session alike), never a reply to a turn it sends after the answer, and
 * nothing is derived: no row, no failed derivation.
 */
export async function eraseWhileStarting(sides: RaceSides, offsetMs: number): Promise<RaceOutcome> {
  const directory = new SeniorDirectory(sides.pool);
  const senior = await directory.createSenior({ displayName: 'Course Effacement', preferredName: 'Lucie', onboardingDone: true });
  const consents = new PgConsentAdapter(sides.pool);
  for (const category of CONSENT_CATEGORIES) await consents.grant(senior, category);
  const token = generateToken('kiosk');
  await directory.addDevice(senior, token);
  const kiosk = await KioskClient.connect(sides.kioskWs, token);
  const failuresBefore = sides.derivationFailures();
  const problems: string[] = [];

  let sent = 0;
  const next = () => {
    if (sent >= MAX_TURNS || kiosk.socket.readyState !== kiosk.socket.OPEN) return;
    kiosk.send({ type: 'turn', turnId: `t${sent}`, transcript: TURN_TEXTS[sent % TURN_TEXTS.length] });
    sent += 1;
  };
  kiosk.socket.on('message', (raw) => {
    const type = (JSON.parse(raw.toString()) as Frame).type;
    if (type === 'session.ready' || type === 'reply.done') setTimeout(next, TURN_GAP_MS);
  });

  const start = () => kiosk.send({ type: 'session.start' });
  const erase = () => fetch(`${sides.adminUrl}/v1/admin/seniors/${senior}/data`, { method: 'DELETE', headers: { authorization: `Bearer ${ADMIN_TOKEN}` } });
  let answer: Promise<Response>;
  if (offsetMs >= 0) {
    start();
    await at(offsetMs);
    answer = erase();
  } else {
    answer = erase();
    await at(-offsetMs);
    start();
  }
  const res = await answer;
  if (res.status !== 200) problems.push(`DELETE answered ${res.status}`);
  const live = await sides.liveSessions();
  if (live > 0) problems.push(`${live} live session(s) once the DELETE had answered`);
  // Sent after the answer: it must never be answered.
  kiosk.send({ type: 'turn', turnId: 'probe', transcript: TURN_TEXTS[0] });
  const probeAt = () => kiosk.frames.findIndex((f) => f.turnId === 'probe');

  // Both awaited at once (either may come first). Bounded without a clock of their own: a session left
  // alive closes at its process's next heartbeat (as `replaced`), and the probe is always answered.
  const [closed, probeAnswer] = await Promise.all([kiosk.next('session.closed').catch(() => null), kiosk.next((f) => f.turnId === 'probe').catch(() => null)]);
  if (!closed) problems.push(`no session.closed; socket closed ${kiosk.closeCode}`);
  else if (closed.reason !== 'erased') problems.push(`session.closed as ${String(closed.reason)}`);
  if (probeAnswer && String(probeAnswer.type).startsWith('reply.')) problems.push('the turn sent after the DELETE answered was answered');
  const after = probeAt() < 0 ? [] : kiosk.frames.slice(probeAt() + 1);
  const lateReplies = after.filter((f) => f.type === 'reply.done').length;
  if (lateReplies > 0) problems.push(`${lateReplies} turn(s) answered after the DELETE had answered`);
  kiosk.close();

  await sides.derivationsIdle();
  const failed = sides.derivationFailures() - failuresBefore;
  if (failed > 0) problems.push(`${failed} derivation(s) failed`);
  for (const table of DERIVED_TABLES) {
    const n = (await sides.pool.query<{ n: number }>(`SELECT count(*)::int AS n FROM ${table} WHERE senior_id = $1`, [senior])).rows[0]!.n;
    if (n > 0) problems.push(`${n} row(s) left in ${table}`);
  }
  return { offsetMs, started: kiosk.frames.some((f) => f.type === 'session.ready'), problems };
}

/** Offsets of `trials` races, uniform over ±`spreadMs` (positive: the start first). */
export function raceOffsets(trials: number, spreadMs: number): number[] {
  return Array.from({ length: trials }, () => Math.round((Math.random() * 2 - 1) * spreadMs * 10) / 10);
}
