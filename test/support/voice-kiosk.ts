import WebSocket from 'ws';
import { opusCodec } from '../../adapters/voice/opus-codec.ts';
import type { OpusDecoderPort } from '../../machines/voice/voice.port.ts';
import { decodeAudioFrame, decodeFrameHeader, type AudioFrame } from '../../runtime/protocol/frame-header.ts';
import { explainIfTestFails, type Frame } from './kiosk-client.ts';
import { chunks } from './speech.ts';

export const VOICE_START = {
  type: 'session.start',
  mode: 'voice',
  audio: { input: { encoding: 'pcm_s16le', sampleRate: 16000 }, output: { accept: [{ encoding: 'pcm_s16le', sampleRate: 24000 }] }, kiosk: { aec: true } },
};

/** A voice session that negotiates Opus both ways (the microphone captured at 16 kHz). */
export const OPUS_START = {
  ...VOICE_START,
  audio: { ...VOICE_START.audio, input: { encoding: 'opus', sampleRate: 16000 }, output: { accept: [{ encoding: 'opus', sampleRate: 24000 }, { encoding: 'pcm_s16le', sampleRate: 24000 }] } },
};

/**
 * A voice kiosk over a real socket: JSON frames and binary reply-audio frames, in arrival order. Opus
 * reply audio (once `reply.audio.start` says so) is decoded here, one decoder per turn as a kiosk
 * would, so `audio` holds PCM either way and `packets` the bytes as they came.
 */
export class VoiceKiosk {
  readonly frames: Frame[] = [];
  readonly audio: AudioFrame[] = [];
  readonly packets: Array<{ turnId: string; bytes: number; payload: Uint8Array }> = [];
  /** Microphone audio sent so far (ms); `heardAt[i]` is how much had been sent when `frames[i]` came. */
  private sentMs = 0;
  readonly heardAt: number[] = [];
  private readonly opusTurns = new Map<string, OpusDecoderPort>();
  private readonly waiters: Array<{ match: (f: Frame) => boolean; resolve: (f: Frame) => void; reject: (err: Error) => void }> = [];
  private closeCode: number | null = null;

  readonly socket: WebSocket;

  private constructor(socket: WebSocket) {
    this.socket = socket;
    socket.on('close', (code) => {
      // Every frame has come before 'close': what is still awaited never will.
      this.closeCode = code;
      for (const w of this.waiters.splice(0)) w.reject(this.closedBefore());
    });
    socket.on('message', (raw, isBinary) => {
      if (isBinary) {
        const frame = this.decodeReplyFrame(new Uint8Array(raw as Buffer));
        this.audio.push(frame);
        // Binary frames appear in `frames` too, so order against JSON frames can be checked.
        this.push({ type: 'audio', turnId: frame.turnId, sampleOffset: frame.sampleOffset, samples: frame.pcm.length });
        return;
      }
      const frame = JSON.parse(raw.toString()) as Frame;
      if (frame.type === 'reply.audio.start' && frame.encoding === 'opus') this.opusTurns.set(frame.turnId as string, opusCodec().decoder(frame.sampleRate as number));
      this.push(frame);
    });
  }

  private decodeReplyFrame(bytes: Uint8Array): AudioFrame {
    const { turnId, sampleOffset, payload } = decodeFrameHeader(bytes);
    const decoder = this.opusTurns.get(turnId);
    if (!decoder) return decodeAudioFrame(bytes);
    this.packets.push({ turnId, bytes: payload.length, payload: payload.slice() });
    return { turnId, sampleOffset, pcm: decoder.decode(payload) };
  }

  static connect(url: string, token: string): Promise<VoiceKiosk> {
    const socket = new WebSocket(url, { headers: { authorization: `Bearer ${token}` } });
    return new Promise((resolve, reject) => {
      socket.once('open', () => resolve(new VoiceKiosk(socket)));
      socket.once('error', reject);
    });
  }

  send(frame: unknown): void {
    this.socket.send(JSON.stringify(frame));
  }

  /** `gate`: the kiosk declares a speech gate (audio.kiosk.gate); absent, it declares nothing, as one that streams on. */
  async start(aec = true, sampleRate = 24000, gate?: boolean): Promise<Frame> {
    const kiosk = gate === undefined ? { aec } : { aec, gate };
    this.send({ ...VOICE_START, audio: { ...VOICE_START.audio, output: { accept: [{ encoding: 'pcm_s16le', sampleRate }] }, kiosk } });
    return this.next('session.ready');
  }

  /**
   * Streams microphone audio in 20 ms frames, faster than real time but within the audio budget (1.5×);
   * `encode` turns each frame into what is sent (an Opus packet), raw PCM without it.
   */
  async speak(pcm: Int16Array, speed = 1.3, stop?: () => boolean, encode?: (frame: Int16Array) => Uint8Array): Promise<void> {
    const frames = chunks(pcm, 20);
    const started = performance.now();
    for (let i = 0; i < frames.length; i++) {
      if (stop?.()) return;
      const due = started + (i * 20) / speed;
      const wait = due - performance.now();
      if (wait > 1) await new Promise((resolve) => setTimeout(resolve, wait));
      // The runtime refuses frames under 10 ms: the last, short one is padded with silence to a whole frame.
      const frame = frames[i]!.length === frames[0]!.length ? frames[i]! : padded(frames[i]!, frames[0]!.length);
      this.socket.send(encode ? encode(frame) : Buffer.from(frame.buffer, frame.byteOffset, frame.byteLength));
      this.sentMs += (frame.length * 1000) / 16_000;
    }
  }

  /**
   * The next frame from now on (or from index `from`) that matches; rejects if the socket closes
   * first. No deadline of its own: see `explainIfTestFails`.
   */
  next(match: string | ((f: Frame) => boolean), from = this.frames.length): Promise<Frame> {
    const test = typeof match === 'string' ? (f: Frame) => f.type === match : match;
    const seen = this.frames.slice(from).find(test);
    if (seen) return Promise.resolve(seen);
    if (this.closeCode !== null) return Promise.reject(this.closedBefore());
    let pending = true;
    explainIfTestFails(() => `${String(match)}; got ${JSON.stringify(this.frames.slice(from).filter((f) => f.type !== 'audio'))}`, () => pending);
    return new Promise<Frame>((resolve, reject) => this.waiters.push({ match: test, resolve, reject })).finally(() => (pending = false));
  }

  private closedBefore(): Error {
    return new Error(`the socket closed (${this.closeCode}) before a frame matched; got ${JSON.stringify(this.frames.filter((f) => f.type !== 'audio'))}`);
  }

  ofType(type: string, turnId?: string): Frame[] {
    return this.frames.filter((f) => f.type === type && (turnId === undefined || f.turnId === turnId));
  }

  close(): void {
    this.socket.close();
    for (const decoder of this.opusTurns.values()) decoder.close();
    this.opusTurns.clear();
  }

  /** How much microphone audio (ms) had been sent when `frame` came: an upper bound of what the runtime had heard. */
  sentWhen(frame: Frame): number {
    return this.heardAt[this.frames.indexOf(frame)]!;
  }

  private push(frame: Frame): void {
    this.frames.push(frame);
    this.heardAt.push(this.sentMs);
    for (let i = 0; i < this.waiters.length; i++) {
      if (this.waiters[i]!.match(frame)) {
        this.waiters.splice(i, 1)[0]!.resolve(frame);
        i--;
      }
    }
  }
}

function padded(pcm: Int16Array, samples: number): Int16Array {
  const out = new Int16Array(samples);
  out.set(pcm);
  return out;
}
