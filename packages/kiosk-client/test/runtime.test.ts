import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import WebSocket from 'ws';
import { pcmFromBytes, type AudioFrame, type KioskClientEvents, type ServerFrame } from '../src/index.ts';
import { headerSocket, KioskClient, wsSocket } from '../src/node.ts';
import { KIOSK_TOKEN, startTestRuntime, type TestRuntime } from '../../../test/support/runtime.ts';
import { freePort } from '../../../test/support/load-balancer.ts';
import { TcpRelay } from '../../../test/support/tcp-relay.ts';

/**
 * The client against the real runtime over real sockets: a text conversation, a resume after the
 * connection drops under it, a voice session's reply audio through the frame codec, a refused token.
 */
let rt: TestRuntime;
let relay: TcpRelay;
const clients: KioskClient[] = [];

beforeAll(async () => {
  rt = await startTestRuntime();
  relay = await new TcpRelay().start(new URL(rt.url));
});

afterAll(async () => {
  for (const c of clients) c.close();
  await relay?.stop();
  await rt?.close();
});

function client(url = rt.wsUrl, options: Partial<ConstructorParameters<typeof KioskClient>[0]> = {}): KioskClient {
  const c = new KioskClient({ url, token: KIOSK_TOKEN, socket: headerSocket, ...options });
  clients.push(c);
  return c;
}

const next = <E extends keyof KioskClientEvents & string>(c: KioskClient, event: E, match: (v: KioskClientEvents[E]) => boolean = () => true) =>
  new Promise<KioskClientEvents[E]>((resolve) => {
    const off = c.on(event, (v) => {
      if (!match(v)) return;
      off();
      resolve(v);
    });
  });

describe('KioskClient against the runtime', () => {
  it('text: connect (token as ?token=, the default), a turn answered once with its events, ping, end', async () => {
    const c = client(rt.wsUrl, { socket: undefined });
    const frames: ServerFrame['type'][] = [];
    for (const type of ['reply.delta', 'reply.done', 'session.closed'] as const) c.on(type, (f) => frames.push(f.type));
    const ready = await c.connect();
    expect(ready).toMatchObject({ type: 'session.ready', resumed: false });
    expect(c.state).toBe('ready');
    const { turnId, reply } = c.turn('Bonjour');
    const done = await reply;
    expect(done).toMatchObject({ type: 'reply.done', turnId });
    expect(done.text.length).toBeGreaterThan(0);
    expect(frames.filter((t) => t === 'reply.done')).toHaveLength(1);
    expect(await c.ping()).toBeGreaterThanOrEqual(0);
    expect(await c.end()).toBe('ended');
    expect(frames.at(-1)).toBe('session.closed');
    expect(c.state).toBe('closed');
  });

  it('resumes the same session after the connection drops under it, and the next turn is answered', async () => {
    const c = client(relay.url.replace(/^http/, 'ws') + '/kiosk', { reconnect: { baseMs: 50 } });
    const first = await c.connect();
    const resumed = next(c, 'session.ready');
    const reconnecting = next(c, 'client.reconnecting');
    // The network drops every connection (no close frame from anyone), then comes back.
    relay.cut();
    relay.resume();
    expect((await reconnecting).attempt).toBe(1);
    const again = await resumed;
    expect(again).toMatchObject({ sessionId: first.sessionId, resumed: true });
    expect(c.session?.sessionId).toBe(first.sessionId);
    expect((await c.turn('Bonjour').reply).type).toBe('reply.done');
    expect(relay.webSocketOpenedAt).toHaveLength(2);
  });

  it('voice: a typed turn\'s reply audio arrives as decoded frames, from offset 0, up to reply.audio.end', async () => {
    const c = client();
    const audio: AudioFrame[] = [];
    c.on('audio', (f) => audio.push(f));
    const ready = await c.connect({ mode: 'voice', audio: { input: { encoding: 'pcm_s16le', sampleRate: 16000 }, output: { accept: [{ encoding: 'pcm_s16le', sampleRate: 24000 }] }, kiosk: { aec: true } } });
    expect(ready.audio?.output).toEqual({ encoding: 'pcm_s16le', sampleRate: 24000 });
    const { turnId, reply } = c.turn('Bonjour');
    const end = next(c, 'reply.audio.end', (f) => f.turnId === turnId);
    await reply;
    const { durationMs } = await end;
    const frames = audio.filter((f) => f.turnId === turnId);
    expect(frames[0]?.sampleOffset).toBe(0);
    // Frames follow each other: each starts where the previous one ended.
    let offset = 0;
    for (const f of frames) {
      expect(f.sampleOffset).toBe(offset);
      offset += pcmFromBytes(f.payload).length;
    }
    expect(Math.round((offset / 24_000) * 1000)).toBeGreaterThanOrEqual(durationMs - 1);
    c.playbackDone(turnId);
  });

  it.each([
    ['wsSocket', wsSocket(WebSocket)],
    ['headerSocket', headerSocket],
    ['the default socket (?token=)', undefined],
  ] as const)('a token the runtime does not know, %s: refused with HTTP 401; a closed port: connect_failed', async (_name, socket) => {
    const refused = await client(rt.wsUrl, { token: 'kiosk_nobody_0000', socket, reconnect: false }).connect().catch((e: unknown) => e);
    expect(refused).toMatchObject({ code: 'refused', status: 401 });
    const closedPort = await freePort();
    const unreachable = await client(`ws://127.0.0.1:${closedPort}/v1/kiosk`, { socket, reconnect: false }).connect().catch((e: unknown) => e);
    expect(unreachable).toMatchObject({ code: 'connect_failed', status: undefined });
    expect((unreachable as Error).message).toContain('nothing answers there');
  });
});
