import { afterEach, describe, expect, it } from 'vitest';
import WebSocket from 'ws';
import { encodeAudioFrame, KioskClient, KioskError, MAX_PENDING_TURNS, type AudioFrame, type ReplyDoneFrame } from '../src/index.ts';
import { wsSocket } from '../src/node.ts';
import { answersStart, LocalServer } from './local-server.ts';

/**
 * A server that is not the runtime, or a broken one: whatever it sends, the client reports a typed
 * error and goes on; nothing throws out of a socket handler. Real sockets on loopback.
 */
const servers: LocalServer[] = [];
const clients: KioskClient[] = [];
afterEach(async () => {
  for (const c of clients.splice(0)) c.close();
  for (const s of servers.splice(0)) await s.close();
});

async function serve(onConnection: Parameters<typeof LocalServer.start>[0]): Promise<LocalServer> {
  const server = await LocalServer.start(onConnection);
  servers.push(server);
  return server;
}

function client(url: string): { client: KioskClient; errors: KioskError[] } {
  const c = new KioskClient({ url, token: 'kiosk_local', socket: wsSocket(WebSocket), reconnect: false });
  clients.push(c);
  const errors: KioskError[] = [];
  c.on('client.error', (e) => errors.push(e));
  return { client: c, errors };
}

describe('a hostile or broken server', () => {
  it('bad frames after session.ready are typed errors, dropped; the session goes on', async () => {
    const server = await serve(
      answersStart((ws) => {
        ws.send('<html>Bienvenue</html>');
        ws.send('[1,2,3]');
        ws.send('{"type":"reply.delta","turnId":5,"text":"x"}');
        ws.send('{"type":"something.new","x":1}');
        ws.send(Buffer.from([1, 2, 3]));
        ws.send('{"type":"pong"}');
      }),
    );
    const { client: c, errors } = client(server.url);
    let ponged = false;
    c.on('pong', () => (ponged = true));
    const ready = await c.connect();
    expect(ready.sessionId).toBe('local-session');
    await expect.poll(() => ponged).toBe(true);
    expect(errors.map((e) => [e.code, e instanceof KioskError])).toEqual([
      ['bad_frame', true],
      ['bad_frame', true],
      ['bad_frame', true],
      ['unknown_frame', true],
      ['bad_frame', true],
    ]);
    expect(errors[2]!.message).toContain('reply.delta.turnId must be a string, got number');
    expect(errors[4]!.message).toContain('binary frame outside a voice session');
    expect(c.state).toBe('ready');
  });

  it('voice: a malformed audio frame is dropped with a typed error, a good one decoded, a cleared turn\'s dropped', async () => {
    const pcm = new Uint8Array([1, 0, 2, 0]);
    const server = await serve(
      answersStart((ws) => {
        ws.send(Buffer.from([9, 1, 65, 0, 0, 0, 0])); // unknown version
        ws.send(Buffer.from([1, 200, 65])); // shorter than its header
        ws.send(Buffer.from([1, 1, 0xff, 0, 0, 0, 0])); // turnId not UTF-8
        ws.send(encodeAudioFrame('v1', 480, pcm));
        ws.send('{"type":"reply.audio.clear","turnId":"v1"}');
        ws.send(encodeAudioFrame('v1', 960, pcm));
        ws.send(encodeAudioFrame('v2', 0, pcm));
      }),
    );
    const { client: c, errors } = client(server.url);
    const audio: AudioFrame[] = [];
    c.on('audio', (f) => audio.push(f));
    await c.connect({ mode: 'voice', audio: { input: { encoding: 'pcm_s16le', sampleRate: 16000 }, output: { accept: [{ encoding: 'pcm_s16le', sampleRate: 24000 }] }, kiosk: { aec: true } } });
    await expect.poll(() => audio.length).toBe(2);
    expect(audio.map((f) => [f.turnId, f.sampleOffset, [...f.payload]])).toEqual([
      ['v1', 480, [1, 0, 2, 0]],
      ['v2', 0, [1, 0, 2, 0]],
    ]);
    expect(errors.map((e) => e.code)).toEqual(['bad_frame', 'bad_frame', 'bad_frame']);
    expect(errors.map((e) => e.message)).toEqual([
      'audio frame: unknown version 9 (dropped)',
      'audio frame: 3 bytes is shorter than its 206-byte header (dropped)',
      'audio frame: turnId is not valid UTF-8 (dropped)',
    ]);
  });

  it.each([
    ['an HTML page', '<html><body>Bienvenue</body></html>'],
    ['JSON that is not a kiosk frame', '[1,2,3]'],
  ])('answering session.start with %s: connect() rejects with bad_frame, the socket is let go', async (_label, answer) => {
    let closed = false;
    const server = await serve((ws) => {
      ws.on('message', () => ws.send(answer));
      ws.on('close', () => (closed = true));
    });
    const { client: c } = client(server.url);
    const err = (await c.connect().catch((e: unknown) => e)) as KioskError;
    expect(err).toBeInstanceOf(KioskError);
    expect(err.code).toBe('bad_frame');
    expect(c.state).toBe('closed');
    await expect.poll(() => closed).toBe(true);
  });

  it('a refused upgrade: connect() rejects with refused and the HTTP status', async () => {
    const server = await serve(() => {});
    server.accept = false;
    server.refuseWith = 401;
    const { client: c } = client(server.url);
    const err = (await c.connect().catch((e: unknown) => e)) as KioskError;
    expect([err.code, err.status, err.message]).toEqual(['refused', 401, 'refused: HTTP 401']);
  });

  it('session.start refused (unsupported_audio_format): start_refused carrying the runtime\'s error', async () => {
    const server = await serve((ws) => ws.on('message', () => ws.send(JSON.stringify({ type: 'error', code: 'unsupported_audio_format', message: 'audio.input must be …' }))));
    const { client: c } = client(server.url);
    const err = (await c.connect({ mode: 'voice', audio: { input: { encoding: 'mp3', sampleRate: 44100 }, output: { accept: [{ encoding: 'pcm_s16le', sampleRate: 24000 }] }, kiosk: { aec: false } } }).catch((e: unknown) => e)) as KioskError;
    expect(err.code).toBe('start_refused');
    expect(err.serverError).toEqual({ type: 'error', code: 'unsupported_audio_format', message: 'audio.input must be …' });
  });

  it('a listener that throws is reported, and the other listeners and the client go on', async () => {
    const server = await serve(answersStart((ws) => ws.send(JSON.stringify({ type: 'reply.done', turnId: 'x', text: 'Bonjour', flux: 'cache', latencyMs: 0 }))));
    const { client: c, errors } = client(server.url);
    const seen: ReplyDoneFrame[] = [];
    c.on('reply.done', () => {
      throw new Error('a kiosk maker\'s bug');
    });
    c.on('reply.done', (f) => seen.push(f));
    await c.connect();
    await expect.poll(() => seen.length).toBe(1);
    expect(errors.map((e) => [e.code, e.message])).toEqual([['listener_failed', 'a "reply.done" listener threw: a kiosk maker\'s bug']]);
    expect(c.state).toBe('ready');
  });

  it('a turn refused by the runtime rejects with turn_refused; one rate-limited is sent again, same turnId', async () => {
    let turns = 0;
    const server = await serve(
      answersStart((ws) =>
        ws.on('message', (data) => {
          const f = JSON.parse(data.toString()) as { type: string; turnId: string; transcript: string };
          if (f.type !== 'turn') return;
          turns += 1;
          if (f.transcript === 'refuse me') return ws.send(JSON.stringify({ type: 'error', code: 'invalid_frame', message: 'nope', turnId: f.turnId }));
          if (turns === 1) return ws.send(JSON.stringify({ type: 'error', code: 'rate_limited', message: 'slow down', turnId: f.turnId }));
          ws.send(JSON.stringify({ type: 'reply.done', turnId: f.turnId, text: 'Oui', flux: 'cache', latencyMs: 1 }));
        }),
      ),
    );
    const { client: c } = client(server.url);
    await c.connect();
    const { turnId, reply } = c.turn('Bonjour', { turnId: 'a1' });
    expect(turnId).toBe('a1');
    expect(await reply).toMatchObject({ turnId: 'a1', text: 'Oui' });
    expect(server.frames().filter((f) => f.type === 'turn')).toEqual([
      { type: 'turn', turnId: 'a1', transcript: 'Bonjour' },
      { type: 'turn', turnId: 'a1', transcript: 'Bonjour' },
    ]);
    const refused = (await c.turn('refuse me').reply.catch((e: unknown) => e)) as KioskError;
    expect([refused.code, refused.serverError?.code]).toEqual(['turn_refused', 'invalid_frame']);
    // A turnId the client already used, or one the protocol forbids, never leaves the client.
    expect(() => c.turn('encore', { turnId: 'a1' })).toThrow(expect.objectContaining({ code: 'invalid_argument' }) as Error);
    expect(() => c.turn('encore', { turnId: '€'.repeat(100) })).toThrow('at most 255 bytes in UTF-8, got 300');
    expect(() => c.turn('   ')).toThrow('must not be blank');
  });

  it('turns waiting for a reply are bounded in number; close() fails those still waiting with closed', async () => {
    const server = await serve(answersStart());
    const { client: c } = client(server.url);
    await c.connect();
    const waiting = Array.from({ length: MAX_PENDING_TURNS }, (_, i) => c.turn(`question ${i}`).reply.catch((e: KioskError) => e.code));
    expect(() => c.turn('une de plus')).toThrow(`${MAX_PENDING_TURNS} turns are already waiting for their reply`);
    c.close();
    expect(new Set(await Promise.all(waiting))).toEqual(new Set(['closed']));
    expect(() => c.turn('après')).toThrow(expect.objectContaining({ code: 'not_ready' }) as Error);
  });
});
