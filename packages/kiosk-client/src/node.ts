/**
 * `@kohami/kiosk-client/node`: what a kiosk running on Node adds to the core — sockets that send the
 * token as `Authorization: Bearer`, and audio from a WAV file or a raw PCM stream as the microphone.
 */
import { readFile } from 'node:fs/promises';
import { setTimeout as sleep } from 'node:timers/promises';
import { pcmToBytes } from './audio-frame.ts';
import type { KioskClient } from './client.ts';
import { httpAnswer, platformWebSocket, type SocketFactory, type SocketLike } from './socket.ts';
import { readWav } from './wav.ts';

export * from './index.ts';
export { readWav, writeWav, WavFormatError, type WavPcm } from './wav.ts';

/**
 * Node's own WebSocket (undici) with the token in the `Authorization` header. It cannot see a refused
 * upgrade's status, so after a close before opening the client asks the server over HTTP, same header.
 */
export const headerSocket: SocketFactory = (url, token) => {
  const headers = { authorization: `Bearer ${token}` };
  const socket = new (platformWebSocket())(url, { headers });
  socket.probeUpgrade = (timeoutMs) => httpAnswer(new URL(url), headers, timeoutMs);
  return socket;
};

/** The little of the `ws` package's client this needs (the package is not a dependency: pass its class). */
interface WsClient extends SocketLike {
  on(event: 'unexpected-response', listener: (req: unknown, res: { statusCode?: number }) => void): unknown;
}
export type WsClass = new (url: string, options: { headers: Record<string, string> }) => unknown;

/**
 * Sockets from the `ws` package (`import WebSocket from 'ws'`; `wsSocket(WebSocket)`), with the token
 * as a header. Unlike the platform's WebSocket it sees the HTTP status of a refused upgrade, so
 * `connect()` rejects with `refused` and `status` (401: the token; 429: too many sockets; 503: draining).
 */
export function wsSocket(WsWebSocket: WsClass): SocketFactory {
  return (url, token) => {
    const socket = new WsWebSocket(url, { headers: { authorization: `Bearer ${token}` } }) as WsClient;
    socket.on('unexpected-response', (_req, res) => {
      socket.httpStatus = res.statusCode ?? 0;
      // With this listener set, ws leaves the refused request to us: close() aborts it, then says error and close.
      socket.close();
    });
    return socket;
  };
}

/** Microphone frames of `frameMs` (the last one padded with silence), as the runtime takes them. */
export function* pcmFrames(samples: Int16Array, sampleRate: number, frameMs = 20): Generator<Int16Array> {
  const size = Math.round((sampleRate * frameMs) / 1000);
  for (let at = 0; at < samples.length; at += size) {
    const frame = new Int16Array(size);
    frame.set(samples.subarray(at, at + size));
    yield frame;
  }
}

/** A WAV file's samples (16-bit PCM mono; at `sampleRate` when given), or a WavFormatError saying what the file is. */
export async function readWavFile(path: string, sampleRate?: number): Promise<Int16Array> {
  return readWav(new Uint8Array(await readFile(path)), sampleRate).samples;
}

/**
 * Raw PCM s16le from a stream (a pipe from `arecord`, `sox`, a file stream) cut into `frameMs`
 * frames; chunks that split a sample or a frame are joined. The stream's end pads the last frame.
 */
export async function* pcmStreamFrames(stream: AsyncIterable<Uint8Array>, sampleRate: number, frameMs = 20): AsyncGenerator<Int16Array> {
  const frameBytes = Math.round((sampleRate * frameMs) / 1000) * 2;
  let held = new Uint8Array(0);
  for await (const chunk of stream) {
    const joined = new Uint8Array(held.length + chunk.length);
    joined.set(held);
    joined.set(chunk, held.length);
    let at = 0;
    for (; at + frameBytes <= joined.length; at += frameBytes) yield samplesOf(joined.subarray(at, at + frameBytes));
    held = joined.slice(at);
  }
  if (held.length >= 2) {
    const last = new Uint8Array(frameBytes);
    last.set(held.subarray(0, held.length & ~1));
    yield samplesOf(last);
  }
}

const samplesOf = (bytes: Uint8Array): Int16Array => {
  const view = new DataView(bytes.buffer, bytes.byteOffset, bytes.byteLength);
  return Int16Array.from({ length: bytes.length / 2 }, (_, i) => view.getInt16(i * 2, true));
};

export interface StreamAudioOptions {
  frameMs?: number;
  /** Each frame's payload (default PCM s16le); an Opus encoder's `encode` for Opus input. */
  encode?: (frame: Int16Array) => Uint8Array;
  /** Checked before each frame: true stops the stream (e.g. the replies are over). */
  stop?: () => boolean;
}

/**
 * Sends `frames` as the microphone, in real time: frame i leaves at t0 + i·frameMs, however late the
 * previous one was. Ends when the frames do, `stop()` says so, or the session is gone; resolves with
 * the frames sent.
 */
export async function streamAudio(client: KioskClient, frames: Iterable<Int16Array> | AsyncIterable<Int16Array>, options: StreamAudioOptions = {}): Promise<number> {
  const frameMs = options.frameMs ?? 20;
  const encode = options.encode ?? pcmToBytes;
  const t0 = performance.now();
  let sent = 0;
  for await (const frame of frames) {
    if (options.stop?.() || client.state === 'closed') break;
    const wait = t0 + sent * frameMs - performance.now();
    if (wait > 0) await sleep(wait);
    client.sendAudio(encode(frame));
    sent += 1;
  }
  return sent;
}
