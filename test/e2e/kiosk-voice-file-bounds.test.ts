import { once } from 'node:events';
import { mkdtemp, writeFile } from 'node:fs/promises';
import { createServer, type AddressInfo, type Server, type Socket } from 'node:net';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterEach, beforeAll, describe, expect, it, vi } from 'vitest';
import { WebSocketServer } from 'ws';
import { writeWav } from '@kohami/kiosk-client/node';
import { CONNECT_TIMEOUT_MS, READY_TIMEOUT_MS, runVoiceFile, VoiceFileError } from '../../runtime/cli/voice-file-kiosk.ts';

/**
 * `npm run kiosk -- --voice FILE.wav` against hosts that take the connection and never answer: each
 * wait has a bound, ends in a clear error and exit code 1, and leaves no socket open. Real sockets on
 * loopback; only the timers are fake, so no test waits ten seconds.
 */

let wav: string;
const closers: Array<() => Promise<void>> = [];

beforeAll(async () => {
  wav = path.join(await mkdtemp(path.join(tmpdir(), 'kohami-cli-bounds-')), 'question.wav');
  await writeFile(wav, writeWav({ sampleRate: 16_000, samples: new Int16Array(3200) }));
});

afterEach(async () => {
  vi.useRealTimers();
  for (const close of closers.splice(0)) await close();
});

async function listen(server: Server | WebSocketServer): Promise<number> {
  if (!(server instanceof WebSocketServer)) server.listen(0, '127.0.0.1');
  await once(server, 'listening');
  return (server.address() as AddressInfo).port;
}

/** Stops a WebSocket server and drops its clients (its close() alone waits for them). */
function closeAll(wss: WebSocketServer): Promise<void> {
  for (const client of wss.clients) client.terminate();
  return new Promise((resolve) => wss.close(() => resolve()));
}

/** Runs the CLI's voice mode; resolves with how it ended (it must end in a VoiceFileError). */
function run(url: string): Promise<VoiceFileError> {
  return runVoiceFile({ url, token: 'kiosk_any', wav, tailMs: 0, settleMs: 0, write: () => {} }).then(
    () => {
      throw new Error('runVoiceFile resolved against a host that never answers');
    },
    (err: unknown) => err as VoiceFileError,
  );
}

describe('npm run kiosk -- --voice: bounded waits', () => {
  it('a host that accepts the TCP connection and never answers the WebSocket handshake', async () => {
    vi.useFakeTimers({ toFake: ['setTimeout', 'clearTimeout'] });
    const sockets: Socket[] = [];
    // It reads the handshake request (so it sees the client hang up) and never writes a byte.
    const server = createServer((s) => {
      sockets.push(s);
      s.resume();
    });
    const port = await listen(server);
    closers.push(async () => {
      server.close();
      for (const s of sockets) s.destroy();
    });
    const connected = once(server, 'connection');
    const ended = run(`ws://127.0.0.1:${port}/v1/kiosk`);
    await connected;
    const letGo = once(sockets[0]!, 'close');
    await vi.advanceTimersByTimeAsync(CONNECT_TIMEOUT_MS - 1);
    expect(sockets[0]!.destroyed).toBe(false);
    await vi.advanceTimersByTimeAsync(1);
    const err = await ended;
    expect(err).toBeInstanceOf(VoiceFileError);
    expect(err.exitCode).toBe(1);
    expect(err.message).toBe(`no answer from ws://127.0.0.1:${port}/v1/kiosk within 10 s (is a kohami runtime listening there?)`);
    // The client let go of the connection.
    await letGo;
  });

  it('a WebSocket server that accepts the upgrade and never answers session.start', async () => {
    vi.useFakeTimers({ toFake: ['setTimeout', 'clearTimeout'] });
    const wss = new WebSocketServer({ port: 0, host: '127.0.0.1' });
    const port = await listen(wss);
    closers.push(() => closeAll(wss));
    const received: string[] = [];
    let started!: () => void;
    const startSent = new Promise<void>((resolve) => (started = resolve));
    const closed = new Promise<void>((resolve) => {
      wss.on('connection', (ws) => {
        ws.on('message', (data) => {
          received.push(data.toString());
          started();
        });
        ws.on('close', () => resolve());
      });
    });
    const ended = run(`ws://127.0.0.1:${port}/v1/kiosk`);
    await startSent;
    expect(JSON.parse(received[0]!)).toMatchObject({ type: 'session.start', mode: 'voice' });
    await vi.advanceTimersByTimeAsync(READY_TIMEOUT_MS);
    const err = await ended;
    expect(err).toBeInstanceOf(VoiceFileError);
    expect(err.exitCode).toBe(1);
    expect(err.message).toBe(`ws://127.0.0.1:${port}/v1/kiosk accepted the connection but started no session within 10 s (is it a kohami runtime?)`);
    await closed;
    // Nothing was streamed to a host that never said it was a voice session.
    expect(received).toHaveLength(1);
  });

  it('a WebSocket server that answers with something else than the kiosk protocol', async () => {
    const wss = new WebSocketServer({ port: 0, host: '127.0.0.1' });
    const port = await listen(wss);
    closers.push(() => closeAll(wss));
    wss.on('connection', (ws) => ws.on('message', () => ws.send('<html>hello</html>')));
    const err = await run(`ws://127.0.0.1:${port}/v1/kiosk`);
    expect(err).toBeInstanceOf(VoiceFileError);
    expect(err.exitCode).toBe(1);
    expect(err.message).toContain('sent a frame that is not the kiosk protocol');
  });
});
