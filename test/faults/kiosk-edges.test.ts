import { afterAll, afterEach, beforeAll, describe, expect, it, vi } from 'vitest';
import { NEUTRAL_REPLY } from '../../adapters/fluxes/memory-flux.adapter.ts';
import { generateToken } from '../../adapters/postgres/tokens.ts';
import { REMEMBERED_TURN_IDS } from '../../runtime/kiosk/recent-turn-ids.ts';
import { SERVICE_RESTART } from '../../runtime/protocol/messages.ts';
import { KioskClient, type Frame } from '../support/kiosk-client.ts';
import { controllableModel, streamingModel, switchableModel } from '../support/models.ts';
import { KIOSK_TOKEN, startTestRuntime, type TestRuntime } from '../support/runtime.ts';

/**
 * The kiosk frames' edges: a turn the flood limit drops is answered with its turnId, a replayed
 * turnId is refused (also after a resume on a new socket), the Bearer scheme in any case, and a
 * shutdown that sends the kiosk elsewhere with close code 1012.
 */
const agent = switchableModel(streamingModel(['Je vous ', 'écoute.']));
/** The refill is negligible (one frame per 1,000 s): a socket's budget is its burst, and nothing else. */
const BURST = 400;
let rt: TestRuntime;
const open: KioskClient[] = [];

/** A kiosk with its token (Bearer), or with exactly the given headers when the token is null. */
async function kiosk(token: string | null = KIOSK_TOKEN, headers: Record<string, string> = {}): Promise<KioskClient> {
  const client = await KioskClient.connect(rt.wsUrl, token ?? undefined, { headers });
  open.push(client);
  return client;
}

/** A senior without the conversation consent: every turn gets the neutral line, with no model call and nothing derived. */
async function seniorWithoutConsent(): Promise<string> {
  const senior = await rt.directory.createSenior({ displayName: 'Sans consentement', onboardingDone: true });
  const token = generateToken('kiosk');
  await rt.directory.addDevice(senior, token);
  return token;
}

const doneOf = (k: KioskClient, turnId: string) => k.frames.filter((f) => f.type === 'reply.done' && f.turnId === turnId);

beforeAll(async () => {
  rt = await startTestRuntime({ agentModel: agent, rateLimit: { perSecond: 0.001, burst: BURST } });
});
afterEach(() => {
  vi.useRealTimers();
});
afterAll(async () => {
  for (const c of open) c.close();
  await rt.close();
});

describe('the Bearer scheme on the kiosk upgrade', () => {
  it.each(['bearer', 'BEARER', 'bEaReR'])('%s, with extra spaces, opens the session', async (scheme) => {
    const k = await kiosk(null, { authorization: `${scheme}   ${KIOSK_TOKEN}  ` });
    expect(await k.start()).toMatchObject({ type: 'session.ready', seniorId: rt.seed!.seniorId });
  });

  it('another scheme is refused with 401', async () => {
    await expect(kiosk(null, { authorization: `Basic ${KIOSK_TOKEN}` })).rejects.toMatchObject({ statusCode: 401 });
  });
});

describe('a turn dropped by the rate limit is answered', () => {
  it('each dropped turn gets its own rate_limited error with its turnId; other frames one notice per second', async () => {
    // Only the monotonic clock is faked: the bucket cannot refill and the notice's second cannot pass while the test runs.
    vi.useFakeTimers({ toFake: ['performance'] });
    const k = await kiosk();
    await k.start();
    for (let i = 1; i < BURST; i++) k.send({ type: 'ping' });
    await k.next((f) => f.type === 'pong' && k.frames.filter((p) => p.type === 'pong').length === BURST - 1);

    for (const turnId of ['r1', 'r2', 'r3']) k.send({ type: 'turn', turnId, transcript: 'vous êtes là ?' });
    for (let i = 0; i < 5; i++) k.send({ type: 'ping' });
    k.send({ type: 'interrupt', turnId: 'r1' });
    k.send('{"type":"turn","turnId":"r4","transcript":"le flot"}');
    const errors: Frame[] = [];
    for (let i = 0; i < 5; i++) errors.push(await k.next('error'));
    expect(errors.filter((e) => e.turnId !== undefined).map((e) => [e.code, e.turnId])).toEqual([
      ['rate_limited', 'r1'],
      ['rate_limited', 'r2'],
      ['rate_limited', 'r3'],
      ['rate_limited', 'r4'],
    ]);
    expect(errors.filter((e) => e.turnId === undefined)).toEqual([{ type: 'error', code: 'rate_limited', message: expect.stringContaining('per second') }]);
    expect(String(errors[0]!.message)).toContain('send it again');

    // Nothing was answered for a dropped turn; once the budget is back, the same turnId is a new turn.
    vi.advanceTimersByTime(10_000_000);
    expect(await k.turn('r1', 'bonjour')).toMatchObject({ turnId: 'r1', flux: 'cache' });
    expect(doneOf(k, 'r1')).toHaveLength(1);
    expect(k.frames.filter((f) => f.type === 'reply.done' && ['r2', 'r3', 'r4'].includes(String(f.turnId)))).toEqual([]);
    expect(k.frames.filter((f) => f.type === 'error')).toHaveLength(5);
  });
});

describe('a turnId is answered once per session', () => {
  it('a replayed turnId gets duplicate_turn with its turnId, and is not answered again', async () => {
    const model = streamingModel(['Bien ', 'noté.']);
    agent.use(model);
    const k = await kiosk();
    await k.start();
    expect(await k.turn('d1', 'je suis allée au marché')).toMatchObject({ flux: 'agent', text: 'Bien noté.' });
    k.send({ type: 'turn', turnId: 'd1', transcript: 'je suis allée au marché' });
    expect(await k.next('error')).toMatchObject({ code: 'duplicate_turn', turnId: 'd1', message: expect.stringContaining('d1') });
    expect(await k.turn('d2', 'et ensuite au parc')).toMatchObject({ flux: 'agent' });
    expect(doneOf(k, 'd1')).toHaveLength(1);
    expect(model.doStreamCalls).toHaveLength(2);
  });

  it('a replay during the reply neither interrupts it nor starts another one', async () => {
    const model = controllableModel(['Il était ', 'une fois.']);
    agent.use(model);
    const k = await kiosk();
    await k.start();
    k.send({ type: 'turn', turnId: 'live', transcript: 'raconte-moi une histoire' });
    await k.next((f) => f.type === 'reply.delta' && f.turnId === 'live');
    k.send({ type: 'turn', turnId: 'live', transcript: 'raconte-moi une histoire' });
    expect(await k.next('error')).toMatchObject({ code: 'duplicate_turn', turnId: 'live' });
    model.release();
    const done = await k.next((f) => f.type === 'reply.done' && f.turnId === 'live');
    expect(done).toMatchObject({ text: 'Il était une fois.', flux: 'agent' });
    expect(done.interrupted).toBeUndefined();
    expect(model.doStreamCalls).toHaveLength(1);
  });

  it('the session remembers its turnIds across a resume on a new socket; a new session starts afresh', async () => {
    agent.use(streamingModel(['Oui.']));
    const first = await kiosk();
    const a = await first.start();
    await first.turn('m1', 'je me souviens de tout');
    const second = await kiosk();
    expect(await second.start(true)).toMatchObject({ sessionId: a.sessionId, resumed: true });
    second.send({ type: 'turn', turnId: 'm1', transcript: 'je me souviens de tout' });
    expect(await second.next('error')).toMatchObject({ code: 'duplicate_turn', turnId: 'm1' });

    const third = await kiosk();
    expect((await third.start(false)).sessionId).not.toBe(a.sessionId);
    expect(await third.turn('m1', 'je me souviens de tout')).toMatchObject({ type: 'reply.done', turnId: 'm1' });
  });

  it(`remembers the last ${REMEMBERED_TURN_IDS} turnIds of a session, no more`, async () => {
    const token = await seniorWithoutConsent();
    let k = await kiosk(token);
    await k.start();
    expect(await k.turn('first', 'une phrase')).toMatchObject({ text: NEUTRAL_REPLY });
    // Sent in batches on successive sockets (resumed): each socket's own flood budget is BURST frames.
    let sent = 0;
    const sendOthers = async (count: number) => {
      while (count > 0) {
        const batch = Math.min(count, BURST - 10);
        for (let i = 0; i < batch; i++) k.send({ type: 'turn', turnId: `o${sent + i}`, transcript: `phrase numéro ${sent + i}` });
        sent += batch;
        count -= batch;
        await k.next((f) => f.type === 'reply.done' && f.turnId === `o${sent - 1}`);
        k.close();
        k = await kiosk(token);
        await k.start(true);
      }
    };
    await sendOthers(REMEMBERED_TURN_IDS - 1);
    k.send({ type: 'turn', turnId: 'first', transcript: 'une phrase' });
    expect(await k.next('error')).toMatchObject({ code: 'duplicate_turn', turnId: 'first' });
    await sendOthers(1);
    expect(await k.turn('first', 'une phrase')).toMatchObject({ turnId: 'first', text: NEUTRAL_REPLY });
    k.send({ type: 'turn', turnId: `o${sent - 1}`, transcript: 'encore' });
    expect(await k.next('error')).toMatchObject({ code: 'duplicate_turn', turnId: `o${sent - 1}` });
  });
});

describe('a refused turn frame names its turn', () => {
  it('an invalid turn echoes its turnId, so the kiosk knows which words were lost', async () => {
    const k = await kiosk();
    await k.start();
    k.send({ type: 'turn', turnId: 'blank', transcript: '   ' });
    expect(await k.next('error')).toMatchObject({ code: 'invalid_frame', turnId: 'blank', message: expect.stringContaining('transcript') });
    k.send({ type: 'turn', turnId: 42, transcript: 'bonjour' });
    const untagged = await k.next('error');
    expect(untagged).toMatchObject({ code: 'invalid_frame' });
    expect(untagged.turnId).toBeUndefined();
  });
});

// Last: it shuts the file's runtime down.
describe('during shutdown', () => {
  it('a live session and a start both hear session.closed "shutdown", then close 1012 (service restart), with nothing alarming logged', async () => {
    const live = await kiosk();
    await live.start();
    const idle = await kiosk();
    const logged = rt.logs.lines.length;

    rt.registry.shutdown();
    expect(await live.next('session.closed')).toEqual({ type: 'session.closed', reason: 'shutdown' });
    expect(await live.closed).toBe(SERVICE_RESTART);

    idle.send({ type: 'session.start' });
    expect(await idle.next('session.closed')).toEqual({ type: 'session.closed', reason: 'shutdown' });
    expect(await idle.closed).toBe(SERVICE_RESTART);
    expect(idle.frames.map((f) => f.type)).toEqual(['session.closed']);

    const lines = rt.logs.lines.slice(logged).map((l) => JSON.parse(l) as { level: number; msg: string });
    expect(lines.map((l) => l.msg)).toContain('session start refused: shutting down');
    expect(lines.filter((l) => l.level >= 40)).toEqual([]);
  });
});
