import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { SeniorDirectory } from '../../adapters/postgres/senior-directory.ts';
import { generateToken } from '../../adapters/postgres/tokens.ts';
import { KioskClient, type Frame } from '../support/kiosk-client.ts';
import { freePort, startLoadBalancer, type LoadBalancer } from '../support/load-balancer.ts';
import { ReconnectingKiosk } from '../support/reconnecting-kiosk.ts';
import { ADMIN_TOKEN } from '../support/runtime.ts';
import { runtimeProcess, type RuntimeProcess } from '../support/runtime-process.ts';
import { sharedDatabase, type SharedDatabase } from '../support/shared-database.ts';

/**
 * Scale-out, for real: N runtime processes (`npm start`'s entry) on one database — the embedded one
 * served over the wire, or the PostgreSQL server of TEST_DATABASE_URL — behind Debian's nginx running
 * the shipped deploy/nginx.conf (a consistent hash of the kiosk's token picks its process). Presence
 * beats at its default (5 s): nothing here is explained by a heartbeat.
 */
/**
 * What a takeover may wait for the process that held the session to say it closed it (500 ms by default):
 * here ten times that, so that a live process on a loaded machine answers well within it. A takeover that
 * waited it out — the new process logs TAKEOVER_UNANSWERED — is one the old process did not answer: a
 * live one must, a killed one cannot. How long a takeover and a killed process's kiosks' return take is
 * measured by `npm run bench:takeover`, not here.
 */
const TAKEOVER_ACK_MS = 5_000;
/** What the taking process logs when the old one did not answer within TAKEOVER_ACK_MS (runtime/sessions/takeover.ts). */
const TAKEOVER_UNANSWERED = 'takeover: the other process did not release the session in time';
const TRANSCRIPTS = ['bonjour', 'je suis allée au marché ce matin', 'merci beaucoup', 'il pleut encore aujourd’hui'];

interface Slot {
  port: number;
  p: RuntimeProcess;
  processId: string;
}

// At info, each process logs its sessions' starts and closes (ids only), timestamped on the machine's one clock.
// A turn's budget of 10 s, not 2.5: the subject is that a turn is answered by whichever process holds the
// session, not how soon (bench:takeover times that); at load 12 a turn right after a takeover outlasted 2.5 s.
const env = (port: number) => ({ PORT: String(port), TAKEOVER_ACK_MS: String(TAKEOVER_ACK_MS), SHUTDOWN_DRAIN_MS: '10000', LOG_LEVEL: 'info', TURN_BUDGET_MS: '10000' });

/** When (pino's `time`, ms) the process has logged a line starting with `msg` for the session, or undefined. */
function loggedSoFar(p: RuntimeProcess, msg: string, sessionId: string): number | undefined {
  for (const line of p.output().split('\n')) {
    if (!line.startsWith('{')) continue;
    const entry = JSON.parse(line) as { msg?: string; sessionId?: string; time?: number };
    if (entry.msg?.startsWith(msg) && entry.sessionId === sessionId) return entry.time;
  }
  return undefined;
}

/** When the process logged `msg` for the session; the line may still be on its way through the pipe. */
async function loggedAt(p: RuntimeProcess, msg: string, sessionId: string): Promise<number> {
  await expect.poll(() => loggedSoFar(p, msg, sessionId), { message: `${msg} of ${sessionId} logged` }).toBeTypeOf('number');
  return loggedSoFar(p, msg, sessionId)!;
}

async function processIdOf(p: RuntimeProcess): Promise<string> {
  const res = await fetch(`${p.url}/v1/ops/sessions`, { headers: { authorization: `Bearer ${ADMIN_TOKEN}` } });
  return ((await res.json()) as { processId: string }).processId;
}

const replyFrame = (f: Frame) => f.type === 'reply.delta' || f.type === 'reply.done';

describe.each([2, 3])('%i runtime processes on one database behind nginx', (n) => {
  let db: SharedDatabase;
  let pool: pg.Pool;
  let lb: LoadBalancer;
  const slots: Slot[] = [];
  /** One device token per senior: two kiosks per process. */
  const tokens: string[] = [];

  const start = async (port: number): Promise<Slot> => {
    const p = await runtimeProcess(db.url, env(port));
    return { port, p, processId: await processIdOf(p) };
  };
  /** The slot whose process holds the session, as presence says (any process can tell). */
  const holder = async (sessionId: string): Promise<Slot> => {
    const alive = slots.find((s) => s.p.child.exitCode === null && s.p.child.signalCode === null)!;
    const res = await fetch(`${alive.p.url}/v1/ops/sessions`, { headers: { authorization: `Bearer ${ADMIN_TOKEN}` } });
    const { sessions } = (await res.json()) as { sessions: Array<{ sessionId: string; processId: string }> };
    const processId = sessions.find((s) => s.sessionId === sessionId)?.processId;
    const slot = slots.find((s) => s.processId === processId);
    if (!slot) throw new Error(`no process holds ${sessionId}`);
    return slot;
  };
  /** The process `slot` stops (SIGTERM, drained) or is gone, and another takes its port. */
  const replace = async (slot: Slot) => {
    await slot.p.stop();
    Object.assign(slot, await start(slot.port));
  };

  beforeAll(async () => {
    db = await sharedDatabase();
    const ports = await Promise.all(Array.from({ length: n }, () => freePort()));
    // The first migrates; the others find the schema in place.
    slots.push(await start(ports[0]!));
    slots.push(...(await Promise.all(ports.slice(1).map((port) => start(port)))));
    lb = await startLoadBalancer(ports);
    pool = new pg.Pool({ connectionString: db.url, max: 1 });
    const directory = new SeniorDirectory(pool);
    for (let i = 0; i < 2 * n; i++) {
      const senior = await directory.createSenior({ displayName: `Senior ${i}`, preferredName: `Senior ${i}`, onboardingDone: true });
      const token = generateToken('kiosk');
      await directory.addDevice(senior, token);
      tokens.push(token);
    }
  }, 120_000);
  afterAll(async () => {
    await lb?.stop();
    await Promise.all(slots.map((s) => s.p.stop()));
    await pool?.end();
    await db?.stop();
  }, 60_000);

  it('a takeover on another process is answered by the old one, and the old session answers nothing once the new one is live', async () => {
    const old = await KioskClient.connect(lb.ws, tokens[0]!);
    const oldSession = (await old.start()).sessionId as string;
    const from = await holder(oldSession);
    const to = slots.find((s) => s !== from)!;
    let oldReplies = 0;
    old.socket.on('message', (raw) => {
      if (replyFrame(JSON.parse(raw.toString()) as Frame)) oldReplies += 1;
    });
    // The old kiosk talks without a pause, through the takeover, until its session closes.
    const chatter = (async () => {
      for (let i = 0; ; i++) {
        old.send({ type: 'turn', turnId: `old-${i}`, transcript: TRANSCRIPTS[i % TRANSCRIPTS.length] });
        const frame = await old.next((f) => (f.type === 'reply.done' && f.turnId === `old-${i}`) || f.type === 'session.closed');
        if (frame.type === 'session.closed') return frame;
      }
    })();
    await expect.poll(() => oldReplies).toBeGreaterThan(3);

    // Straight to another process (through the balancer, the same token goes to the same one).
    const fresh = await KioskClient.connect(to.p.ws, tokens[0]!);
    fresh.send({ type: 'session.start' });
    const ready = await fresh.next('session.ready');

    expect(await chatter).toEqual({ type: 'session.closed', reason: 'replaced' });
    // The ordering, where it is decided: the old process closed its session (its last frame to the old
    // kiosk) before the new process started the new one. Arrival times at two sockets through two paths
    // (one through nginx) do not tell that apart within a few ms, the processes' one clock does.
    expect(await loggedAt(from.p, 'session closed', oldSession)).toBeLessThanOrEqual(await loggedAt(to.p, 'session started', ready.sessionId as string));
    // And the old process said so: the new one did not go on at the end of TAKEOVER_ACK_MS.
    expect(loggedSoFar(to.p, TAKEOVER_UNANSWERED, oldSession)).toBeUndefined();
    // On the old socket, nothing after its session.closed.
    const closedIndex = old.frames.findIndex((f) => f.type === 'session.closed');
    expect(old.frames.slice(closedIndex).filter(replyFrame)).toEqual([]);
    // A turn on the old socket now is refused, not answered; the new session answers.
    old.send({ type: 'turn', turnId: 'late', transcript: 'bonjour' });
    expect(await old.next((f) => f.turnId === 'late')).toMatchObject({ type: 'error', code: 'no_session' });
    expect(await fresh.turn('new-1', 'bonjour')).toMatchObject({ flux: 'cache' });
    expect(await holder(ready.sessionId as string)).toBe(to);
    old.close();
    fresh.send({ type: 'session.end' });
    await fresh.next('session.closed');
    fresh.close();
  });

  it('a process killed with -9: its kiosks are back, answered, on another once TAKEOVER_ACK_MS has passed unanswered; the others never noticed', async () => {
    const kiosks = await Promise.all(tokens.map((t) => ReconnectingKiosk.open(lb.ws, t)));
    for (const [i, k] of kiosks.entries()) expect(await k.turn(`k-${i}`, 'bonjour')).toMatchObject({ flux: 'cache' });
    const victim = await holder(kiosks[0]!.sessions.at(-1)!.sessionId);
    const orphans: ReconnectingKiosk[] = [];
    for (const k of kiosks) if ((await holder(k.sessions.at(-1)!.sessionId)) === victim) orphans.push(k);

    const lost = orphans.map((k) => k.sessions.at(-1)!.sessionId);
    victim.p.child.kill('SIGKILL');
    await Promise.all(orphans.map((k) => k.resumeWhenLost()));
    // Each lost session was taken over by a process that waited for an answer the dead one could not give.
    for (const sessionId of lost) await expect.poll(() => slots.some((s) => s !== victim && loggedSoFar(s.p, TAKEOVER_UNANSWERED, sessionId) !== undefined)).toBe(true);
    for (const [i, k] of orphans.entries()) expect((await k.turn(`after-${i}`, 'merci beaucoup')).flux).not.toBe('sos');
    for (const k of orphans) expect(await holder(k.sessions.at(-1)!.sessionId)).not.toBe(victim);
    for (const k of kiosks) if (!orphans.includes(k)) expect(k.reconnects).toBe(0);

    for (const k of kiosks) k.close();
    await replace(victim);
  }, 60_000);

  it('a rolling restart under load (SIGTERM, one process at a time): no turn lost, no SOS', async () => {
    const kiosks = await Promise.all(tokens.map((t) => ReconnectingKiosk.open(lb.ws, t)));
    let restarting = true;
    let answered = 0;
    const talking = kiosks.map(async (k, i) => {
      let sent = 0;
      while (restarting || sent < 2) {
        await k.turn(`r${i}-${sent}`, TRANSCRIPTS[sent % TRANSCRIPTS.length]!);
        sent += 1;
        answered += 1;
      }
      return sent;
    });
    for (const slot of slots) {
      const before = answered;
      await replace(slot);
      // Turns went on meanwhile, and go on with the new process in.
      await expect.poll(() => answered, { timeout: 30_000 }).toBeGreaterThan(before + kiosks.length);
    }
    restarting = false;
    const sent = await Promise.all(talking);

    for (const [i, k] of kiosks.entries()) {
      const done = k.received.map((r) => r.frame).filter((f) => f.type === 'reply.done');
      // Every turn sent got its reply once (a turn cut by a restart is sent again, to the new session), none of them SOS.
      expect(new Set(done.map((f) => f.turnId)).size).toBe(sent[i]);
      expect(done.filter((f) => f.flux === 'sos')).toEqual([]);
    }
    console.info(`${n} processes: rolling restart, ${sent.reduce((a, b) => a + b, 0)} turns answered, ${kiosks.reduce((sum, k) => sum + k.reconnects, 0)} reconnections`);
    // The restarts did reach the kiosks (every one of them lived on some process that was restarted).
    for (const k of kiosks) expect(k.reconnects).toBeGreaterThan(0);
    for (const k of kiosks) k.close();
  }, 180_000);
});
