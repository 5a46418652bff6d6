import { pcmFromBytes, type AudioFrame } from '../audio-frame.ts';
import type { KioskClient } from '../client.ts';
import type {
  AudioFormat, ReplyAudioClearFrame, ReplyAudioEndFrame, ReplyAudioMarkFrame, ReplyAudioPauseFrame, ReplyAudioResumeFrame, ReplyAudioStartFrame, SessionReadyFrame, VoiceAudioRequest,
} from '../protocol.ts';
import { FRAME_MS, PCM_INPUT_RATE } from './capture-frames.ts';
import { Microphone } from './microphone.ts';
import { MicOpusEncoder, OPUS_RATE, opusSupport, ReplyOpusDecoder, type OpusSupport } from './opus.ts';
import { ReplyPlayer, type JitterBufferSettings } from './reply-player.ts';
import { SpeechGate, type SpeechGateOptions } from './speech-gate.ts';

/**
 * A browser kiosk's voice: the microphone (capture at the negotiated rate, optionally behind the speech
 * gate, Opus through WebCodecs where the browser encodes it), the reply's playback (jitter buffer,
 * `playback.progress`, the sentence marks, `playback.done`), interrupt and mute. It owns no socket:
 * what it sends goes through `link` (a `KioskClient` is one), what the runtime sends comes in through
 * `frame()` and `audio()` (see `attachVoice` in ../browser.ts for the wiring).
 */

/** What the voice sends on the session: a `KioskClient` is one. */
export type VoiceLink = Pick<KioskClient, 'sendAudio' | 'playbackProgress' | 'playbackDone' | 'interrupt' | 'mute'>;

/** The `audio` of a voice `session.start`. */
export interface VoiceStartAudio extends VoiceAudioRequest {
  input: AudioFormat;
  output: { accept: AudioFormat[] };
}

/** The frames the voice acts on (any other is ignored). */
export type VoiceFrame = SessionReadyFrame | ReplyAudioStartFrame | ReplyAudioMarkFrame | ReplyAudioEndFrame | ReplyAudioClearFrame | ReplyAudioPauseFrame | ReplyAudioResumeFrame;

export interface VoiceEvents {
  /** The playing or paused turn, the microphone's state or the gate changed (update the UI). */
  change(): void;
  /** Playback passed a sentence mark: the senior has heard `reply.done.text` up to `textOffset`. */
  mark(event: { turnId: string; textOffset: number }): void;
  /** The turn's audio has all played (`playback.done` was sent). */
  played(turnId: string): void;
  /** The reply's audio ran dry before its end (a late frame); playback goes on after a short rebuffer. */
  underrun(event: { turnId: string; count: number }): void;
  /** A reply frame was dropped: the jitter buffer held its `maxBufferMs` already. */
  overflow(turnId: string): void;
  /** The speech gate opened (with `preRollFrames` sent ahead of the speech) or closed. */
  gate(event: { open: boolean; preRollFrames: number }): void;
}

export interface VoiceOptions {
  link: VoiceLink;
  /** `pcm`: PCM both ways (tests, debugging); `auto` (default): Opus each way the browser's WebCodecs do. */
  codec?: 'auto' | 'pcm';
  /** Send the microphone only around speech (declared in session.start), once the runtime accepts gaps; `true` for the defaults. */
  speechGate?: boolean | SpeechGateOptions;
  /** Reply rates this kiosk plays as PCM, best first (the browser resamples to the speaker). */
  outputRates?: number[];
  jitterBuffer?: Partial<JitterBufferSettings>;
  events?: Partial<VoiceEvents>;
  /** Where the capture worklet module is served (default: next to microphone.ts). */
  workletUrl?: URL | string;
}

/** `playback.progress` while a reply plays: what the protocol asks (~250 ms). */
export const PROGRESS_EVERY_MS = 250;
const DEFAULT_OUTPUT_RATES = [24000, 16000, 48000];

export class BrowserVoice {
  private readonly options: VoiceOptions;
  private readonly events: Partial<VoiceEvents>;
  private readonly playbackCtx: AudioContext;
  readonly player: ReplyPlayer;
  private readonly opus: OpusSupport;
  /** Null: no microphone (none, or refused): the kiosk types, replies still play. */
  readonly microphone: Microphone | null;
  private encoder: MicOpusEncoder | null = null;
  private decoder: ReplyOpusDecoder | null = null;
  private outputEncoding: AudioFormat['encoding'] = 'pcm_s16le';
  private gate: SpeechGate | null = null;
  private sendingMic = false;
  private mutedMic = false;
  private readonly progressTimer: ReturnType<typeof setInterval>;
  private capturing = false;
  private captureRate = 0;
  /** Microphone frames sent (after the gate), for the kiosk's own view of what left the device. */
  framesSent = 0;

  private constructor(options: VoiceOptions, playbackCtx: AudioContext, opus: OpusSupport, microphone: Microphone | null) {
    this.options = options;
    this.events = options.events ?? {};
    this.playbackCtx = playbackCtx;
    this.opus = opus;
    this.microphone = microphone;
    this.player = new ReplyPlayer(
      playbackCtx,
      {
        done: (turnId) => {
          this.options.link.playbackDone(turnId);
          this.events.played?.(turnId);
        },
        change: () => this.events.change?.(),
        underrun: (turnId, count) => this.events.underrun?.({ turnId, count }),
        mark: (turnId, textOffset) => this.events.mark?.({ turnId, textOffset }),
        overflow: (turnId) => this.events.overflow?.(turnId),
      },
      options.jitterBuffer,
    );
    this.progressTimer = setInterval(() => this.tick(), PROGRESS_EVERY_MS);
  }

  /**
   * Call from a user gesture (a click): browsers let a context created there play and record. Opens the
   * microphone if there is one; a refused or missing microphone leaves `microphone` null.
   */
  static async open(options: VoiceOptions): Promise<BrowserVoice> {
    const playbackCtx = new AudioContext();
    await playbackCtx.resume();
    const opus = options.codec === 'pcm' ? { input: false, output: false } : await opusSupport();
    let microphone: Microphone | null = null;
    try {
      microphone = await Microphone.open();
    } catch (err) {
      console.warn('microphone unavailable', err);
    }
    return new BrowserVoice(options, playbackCtx, opus, microphone);
  }

  /** The `audio` to put in `session.start` (`mode: "voice"`): Opus first where it can, PCM after it as the fallback. */
  startAudio(): VoiceStartAudio {
    const rates = this.options.outputRates ?? DEFAULT_OUTPUT_RATES;
    return {
      input: this.opus.input ? { encoding: 'opus', sampleRate: OPUS_RATE } : { encoding: 'pcm_s16le', sampleRate: PCM_INPUT_RATE },
      output: {
        accept: [
          ...(this.opus.output ? [{ encoding: 'opus' as const, sampleRate: OPUS_RATE }] : []),
          ...rates.map((sampleRate) => ({ encoding: 'pcm_s16le' as const, sampleRate })),
        ],
      },
      // `gate` is said before session.ready: the gate engages only if the runtime then offers gaps (ready()), and a
      // runtime that does not offer them fills nothing; a kiosk that streams on declares none, so a stall is not silence.
      kiosk: { aec: this.microphone ? this.microphone.echoCancelled : false, gate: Boolean(this.options.speechGate) && this.microphone !== null },
    };
  }

  /** The microphone is being sent (the session listens, not muted). */
  get listening(): boolean {
    return this.sendingMic && !this.mutedMic;
  }

  get muted(): boolean {
    return this.mutedMic;
  }

  /** The speech gate is on (the runtime accepts gaps) and open (speech is being sent). Null: no gate. */
  get gateOpen(): boolean | null {
    return this.gate ? this.gate.open : null;
  }

  /** A frame from the runtime; the voice acts on session.ready and the reply-audio frames. */
  frame(frame: VoiceFrame | { type: string }): void {
    const f = frame as VoiceFrame;
    switch (f.type) {
      case 'session.ready':
        return void this.ready(f);
      case 'reply.audio.start':
        this.player.begin(f.turnId, f.sampleRate);
        this.closeDecoder();
        if (f.encoding === 'opus') this.decoder = new ReplyOpusDecoder(f.turnId, f.sampleRate, (offset, pcm) => this.player.push(f.turnId, offset, pcm));
        return;
      case 'reply.audio.mark':
        return this.player.mark(f.turnId, f.sampleOffset, f.textOffset);
      case 'reply.audio.end':
        return this.endAudio(f.turnId);
      case 'reply.audio.pause':
        // Speech with no word over the reply (a cough, the television): quiet now, to resume where it stopped.
        return this.player.pause(f.turnId);
      case 'reply.audio.resume':
        return this.player.resume(f.turnId);
      case 'reply.audio.clear':
        return this.cut(f.turnId);
    }
  }

  /** A reply-audio binary frame, its header decoded (the client's `audio` event). */
  audio(frame: AudioFrame): void {
    if (this.outputEncoding !== 'opus') return this.player.push(frame.turnId, frame.sampleOffset, floatPcm(frame.payload));
    // A cleared or finished turn's packets have no decoder any more: dropped.
    if (this.decoder && this.decoder.turnId === frame.turnId) this.decoder.decode(frame.sampleOffset, frame.payload);
  }

  /**
   * Stops the reply now and tells the runtime how much of it was heard (barge-in keeps that much).
   * `turnId`: the playing turn by default; a turn still being thought about may be named.
   */
  interrupt(turnId: string | null = this.player.turnId): void {
    if (!turnId) return;
    const playedMs = this.player.turnId === turnId ? this.player.playedMs() : 0;
    this.options.link.interrupt(turnId, playedMs);
    this.cut(turnId);
  }

  /** Mutes or unmutes the microphone: nothing is sent while muted, and the runtime stops listening. */
  mute(muted: boolean): void {
    if (this.mutedMic === muted) return;
    this.mutedMic = muted;
    this.gate?.reset();
    this.options.link.mute(muted);
    this.events.change?.();
  }

  close(): void {
    clearInterval(this.progressTimer);
    this.sendingMic = false;
    this.closeDecoder();
    this.player.stop();
    this.encoder?.close();
    this.encoder = null;
    this.microphone?.close();
    void this.playbackCtx.close();
  }

  private async ready(frame: SessionReadyFrame): Promise<void> {
    const audio = frame.audio;
    this.outputEncoding = audio?.output.encoding ?? 'pcm_s16le';
    if (frame.mode !== 'voice' || !audio?.voiceInput || !this.microphone) {
      this.sendingMic = false;
      this.events.change?.();
      return;
    }
    const gate = this.options.speechGate;
    // Only a runtime that says so hears a gap as silence; to any other the microphone streams on.
    this.gate = gate && audio.gaps === true ? new SpeechGate(FRAME_MS, gate === true ? {} : gate) : null;
    this.encoder?.close();
    this.encoder = audio.input.encoding === 'opus' ? new MicOpusEncoder((packet) => this.options.link.sendAudio(new Uint8Array(packet))) : null;
    // A resumed session keeps its capture; a new rate (or a first start) opens it.
    if (!this.capturing || this.captureRate !== audio.input.sampleRate) {
      this.captureRate = audio.input.sampleRate;
      this.capturing = true;
      await this.microphone.capture(audio.input.sampleRate, (pcm) => this.micFrame(pcm), this.options.workletUrl);
    }
    this.sendingMic = true;
    this.events.change?.();
  }

  private micFrame(pcm: Int16Array): void {
    if (!this.sendingMic || this.mutedMic) return;
    const gate = this.gate;
    const wasOpen = gate?.open;
    const frames = gate ? gate.push(pcm) : [pcm];
    for (const frame of frames) {
      this.framesSent += 1;
      if (this.encoder) this.encoder.encode(frame);
      else this.options.link.sendAudio(new Uint8Array(frame.buffer, frame.byteOffset, frame.byteLength));
    }
    if (gate && gate.open !== wasOpen) this.events.gate?.({ open: gate.open, preRollFrames: frames.length - 1 });
  }

  /** reply.audio.end: the turn ends for the player once its last packets are decoded and scheduled. */
  private endAudio(turnId: string): void {
    const decoder = this.decoder;
    if (!decoder || decoder.turnId !== turnId) return this.player.end(turnId);
    this.decoder = null;
    void decoder.drain().then(() => this.player.end(turnId));
  }

  private cut(turnId: string): void {
    if (this.decoder?.turnId === turnId) this.closeDecoder();
    this.player.clear(turnId);
  }

  private closeDecoder(): void {
    this.decoder?.close();
    this.decoder = null;
  }

  private tick(): void {
    const turnId = this.player.turnId;
    if (!turnId) return;
    // While paused playedMs does not advance: the protocol lets the kiosk go on sending it.
    this.options.link.playbackProgress(turnId, this.player.playedMs());
    this.player.progress();
  }
}

/** A PCM s16le payload as the Float32 the player schedules. */
function floatPcm(payload: Uint8Array): Float32Array {
  return Float32Array.from(pcmFromBytes(payload), (sample) => sample / 0x8000);
}
