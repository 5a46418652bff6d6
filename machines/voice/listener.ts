/**
 * The per-session microphone front end: re-frames the kiosk's chunks (10–200 ms each), runs the
 * WebRTC gate on every 20 ms frame, runs Silero only on windows near voiced audio, feeds
 * endpointing and hands the utterance's audio — 300 ms of pre-roll first — to whoever transcribes.
 * It emits speech's edges, the utterance's audio and, after each chunk it analysed inside an
 * utterance, one reading (`heard`) for the turn-taking machine; the session actor only ever sees
 * speech started / stopped.
 */
import {
  advanceEndpointing,
  decideWindow,
  QUIET,
  validateEndpointingConfig,
  waitedFor,
  type EndpointingState,
  type WindowDecision,
} from './endpointing.ts';
import { INPUT_SAMPLE_RATE, type ListenerEvents, type SpeechProbability, type VoiceGate } from './voice.port.ts';
import { AudibleEnd, SUB_FRAME_SAMPLES } from './audible-end.ts';

export interface ListenerOptions {
  gate: VoiceGate;
  detector: SpeechProbability;
  /** ENDPOINT_SILENCE_MS, default 2200: the silence that ends an utterance until `endpointAt` says otherwise. */
  endpointSilenceMs: number;
  /** ENDPOINT_MAX_MS, default 3000: no `endpointAt` waits longer. Unset: `endpointSilenceMs` (a fixed endpoint). */
  endpointMaxMs?: number;
  /** Default 250: shorter bursts are not speech. */
  minSpeechMs: number;
  /** 300: audio kept from before speech was detected, so the first syllable reaches the recognizer. */
  preRollMs: number;
  /** Default 30000. */
  maxUtteranceMs: number;
}

/**
 * The neural detector keeps running this long after the gate's last voiced frame, so a soft
 * word ending or a breathy onset the gate half-misses is still judged by Silero.
 */
export const GATE_HANGOVER_MS = 200;

const samplesOf = (ms: number): number => Math.round((ms * INPUT_SAMPLE_RATE) / 1000);
const toMs = (samples: number): number => (samples * 1000) / INPUT_SAMPLE_RATE;

export class Listener {
  private readonly windowSamples: number;
  private readonly windowMs: number;
  private readonly frameSamples: number;
  private readonly hangoverSamples = samplesOf(GATE_HANGOVER_MS);
  private readonly preRollSamples: number;

  /** Received samples not yet analysed; absolute index of its first sample is `analysed`. */
  private pending: Int16Array;
  private pendingLength = 0;
  /** Recent analysed audio, a ring indexed by absolute sample: pre-roll plus the onset still unconfirmed. */
  private readonly history: Int16Array;
  /** The window being analysed, reused: only one is ever in the detector (drains run one after another). */
  private readonly window: Int16Array;
  /** A gate frame straddling two windows, reused (the gate copies it out before returning). */
  private readonly straddle: Int16Array;
  /** The detector failed and the gate alone decides: the caller was told once, on the first failure. */
  private detectorFailing = false;
  private analysed = 0;
  private gated = 0;
  private lastVoicedEnd = Number.NEGATIVE_INFINITY;
  /** Audio before this absolute sample was already handed out (never send the same audio twice). */
  private emittedUntil = 0;
  private state: EndpointingState = QUIET;
  /** The silence that ends the utterance in progress (the end-of-turn decision's, or the default). */
  private endpointMs: number;
  private readonly endpointMaxMs: number;
  /** Silence waited so far in the current pause, to the 8 ms sub-frame (0 outside a pause). */
  private waited = 0;
  /** Pauses started since the listener was built: a new one, even within one chunk, is told apart. */
  private pauseCount = 0;
  /** Where the utterance's audio handed out after its pre-roll and onset begins (absolute sample). */
  private utteranceFrom = 0;
  /** Where the utterance's audio went quiet by its level (when Silero's decay hides it). */
  private readonly level = new AudibleEnd();
  private generation = 0;
  private work: Promise<void> = Promise.resolve();

  private readonly options: ListenerOptions;
  private readonly events: ListenerEvents;

  constructor(
    options: ListenerOptions,
    events: ListenerEvents,
  ) {
    this.options = options;
    this.events = events;
    validateEndpointingConfig(options);
    this.endpointMaxMs = options.endpointMaxMs ?? options.endpointSilenceMs;
    if (!(this.endpointMaxMs >= options.endpointSilenceMs)) throw new RangeError(`listener: endpointMaxMs (${this.endpointMaxMs}) must be at least endpointSilenceMs (${options.endpointSilenceMs})`);
    this.endpointMs = options.endpointSilenceMs;
    if (!(options.preRollMs >= 0) || !Number.isFinite(options.preRollMs)) throw new RangeError(`listener: preRollMs must be ≥ 0, got ${options.preRollMs}`);
    this.windowSamples = options.detector.windowSamples;
    this.windowMs = (this.windowSamples * 1000) / INPUT_SAMPLE_RATE;
    this.frameSamples = options.gate.frameSamples;
    this.preRollSamples = samplesOf(options.preRollMs);
    this.history = new Int16Array(this.preRollSamples + samplesOf(options.minSpeechMs) + 2 * this.windowSamples);
    this.pending = new Int16Array(samplesOf(200) + this.windowSamples);
    this.window = new Int16Array(this.windowSamples);
    this.straddle = new Int16Array(this.frameSamples);
  }

  /** ms of confirmed speech so far in the current utterance (0 outside one). */
  get speechMs(): number {
    return this.state.phase === 'speech' ? this.state.speechMs : 0;
  }

  /** Inside an utterance, confident speech has stopped and the endpointing silence is counting (it may still resume). */
  get paused(): boolean {
    return this.state.phase === 'speech' && this.state.silenceMs > 0;
  }

  /** ms of silence waited in the current pause (0 outside one): what the end-of-turn decision compares. */
  get silenceMs(): number {
    return this.paused ? this.waited : 0;
  }

  /** How many pauses have started: the session sees a new pause even when speech resumed and paused again within one chunk. */
  get pauses(): number {
    return this.pauseCount;
  }

  /** The speech's last 160 ms against the utterance's average, in dB (negative: falling); null when unknown. */
  get levelDb(): number | null {
    return this.level.levelDb();
  }

  /**
   * The end-of-turn decision: the utterance in progress ends once its silence reaches `silenceMs`
   * (at most `endpointMaxMs`) — at once if it already has. Holds for the current pause; the next
   * one starts again from `endpointSilenceMs`. Outside a pause it only sets that pause's wait.
   */
  endpointAt(silenceMs: number): void {
    this.endpointMs = Math.min(Math.max(0, silenceMs), this.endpointMaxMs);
    if (this.paused && this.waited >= this.endpointMs) this.stopForSilence();
  }

  /**
   * Queues 16 kHz mono audio of any length and analyses every complete window; resolves once it
   * is analysed. Chunks are analysed in arrival order even when calls overlap. A window the
   * detector cannot judge (it failed, or its worker is gone) is judged by the gate alone; the
   * first such failure rejects the push once the chunk is analysed, so the caller hears of it
   * once per outage, not once per window.
   */
  push(pcm: Int16Array): Promise<void> {
    this.append(pcm);
    const generation = this.generation;
    // Each push analyses its own audio only: a caller acting on what one chunk did (the session's
    // early flush, its end-of-turn decision) sees the same state whether the event loop delivered
    // the chunks one by one or lagged and delivered many at once.
    const until = this.analysed + this.pendingLength;
    this.work = this.work.catch(() => undefined).then(() => this.drain(generation, until));
    return this.work;
  }

  /** Forgets the stream (pending audio, pre-roll, an utterance under way) without emitting anything. */
  reset(): void {
    this.generation++;
    this.pendingLength = 0;
    this.analysed = 0;
    this.gated = 0;
    this.lastVoicedEnd = Number.NEGATIVE_INFINITY;
    this.emittedUntil = 0;
    this.state = QUIET;
    this.waited = 0;
    this.endpointMs = this.options.endpointSilenceMs;
    this.level.reset();
    this.options.detector.reset();
  }

  private append(pcm: Int16Array): void {
    if (this.pendingLength + pcm.length > this.pending.length) {
      const grown = new Int16Array(Math.max(this.pending.length * 2, this.pendingLength + pcm.length));
      grown.set(this.pending.subarray(0, this.pendingLength));
      this.pending = grown;
    }
    this.pending.set(pcm, this.pendingLength);
    this.pendingLength += pcm.length;
  }

  /** Analyses the audio before absolute sample `until` (what had arrived by its push). */
  private async drain(generation: number, until: number): Promise<void> {
    let failure: unknown;
    while (generation === this.generation && this.analysed + this.windowSamples <= until) {
      const window = this.window;
      window.set(this.pending.subarray(0, this.windowSamples));
      this.endpointWithin(window);
      const start = this.analysed;
      this.runGate(window, start);
      if (this.state.phase === 'quiet') this.level.forget();
      this.level.observe(window, start);
      this.pending.copyWithin(0, this.windowSamples, this.pendingLength);
      this.pendingLength -= this.windowSamples;
      this.remember(window, start);
      this.analysed += this.windowSamples;
      let decision: WindowDecision = 'silence';
      if (this.lastVoicedEnd > start - this.hangoverSamples) {
        try {
          decision = decideWindow(await this.options.detector.probability(window), this.state);
          this.detectorFailing = false;
        } catch (error) {
          // Without the detector, speech is a voiced gate frame in this very window: the hangover only gives Silero the last word.
          decision = this.lastVoicedEnd > start ? 'speech' : 'silence';
          if (!this.detectorFailing) failure ??= error;
          this.detectorFailing = true;
        }
      }
      if (generation !== this.generation) return;
      this.advance(decision);
    }
    // Audio short of a whole window may already complete the endpoint's silence.
    if (generation === this.generation) {
      this.endpointWithin(this.pending.subarray(0, until - this.analysed));
      this.tell();
    }
    if (failure !== undefined) throw failure;
  }

  /**
   * Once the detector has let go of the speech, the endpoint need not wait for the end of a window:
   * audio from the last analysed window on counts toward the silence, 8 ms at a time, as long as its
   * level is quiet. Checked before Silero judges a window and on what arrived short of one, over the
   * same sub-frames in the same order, so the result does not depend on the kiosk's chunk size.
   */
  private endpointWithin(audio: Int16Array): void {
    const state = this.state;
    if (state.phase !== 'speech' || state.silenceMs === 0) return;
    const quietBefore = this.level.quietSamples(this.analysed);
    for (let from = 0; from + SUB_FRAME_SAMPLES <= audio.length; from += SUB_FRAME_SAMPLES) {
      if (!this.level.isQuiet(audio, from)) return;
      const samples = from + SUB_FRAME_SAMPLES;
      // What advanceEndpointing would count for this much more silence (no allocation per sub-frame).
      this.waited = waitedFor(state.silenceMs + toMs(samples), toMs(quietBefore + samples));
      if (this.waited >= this.endpointMs) return this.stopForSilence();
    }
  }

  /** The reading after a chunk, inside an utterance only: what the turn-taking decisions read. */
  private tell(): void {
    if (this.state.phase !== 'speech' || !this.events.heard) return;
    this.events.heard({
      speechMs: this.speechMs,
      paused: this.paused,
      silenceMs: this.silenceMs,
      pauses: this.pauseCount,
      levelDb: this.levelDb,
      sinceStartMs: toMs(this.emittedUntil - this.utteranceFrom),
    });
  }

  /** The pause has lasted the wait: the utterance's audio so far goes out, then speech stopped. */
  private stopForSilence(): void {
    this.state = QUIET;
    this.waited = 0;
    this.emit(this.emittedUntil, this.analysed);
    this.events.speechStopped('silence');
  }

  /** Gate frames lie on their own 20 ms grid; each is judged once all its samples are in the window. */
  private runGate(window: Int16Array, start: number): void {
    const end = start + window.length;
    while (this.gated + this.frameSamples <= end) {
      const from = this.gated - start;
      // A frame straddling the previous window takes its head from the history ring.
      const frame = from >= 0 ? window.subarray(from, from + this.frameSamples) : this.straddling(window, start);
      if (this.options.gate.isVoiced(frame)) this.lastVoicedEnd = this.gated + this.frameSamples;
      this.gated += this.frameSamples;
    }
  }

  private straddling(window: Int16Array, start: number): Int16Array {
    const frame = this.straddle;
    const head = start - this.gated;
    this.copyHistory(this.gated, start, frame);
    frame.set(window.subarray(0, this.frameSamples - head), head);
    return frame;
  }

  private advance(decision: WindowDecision): void {
    const before = this.state;
    const wasSpeaking = before.phase === 'speech';
    // A pause starts: its wait is the default until the end-of-turn decision speaks.
    if (wasSpeaking && before.silenceMs === 0 && decision !== 'speech') {
      this.pauseCount++;
      this.endpointMs = this.options.endpointSilenceMs;
    }
    const quietMs = toMs(this.level.quietSamples(this.analysed));
    const step = advanceEndpointing(before, decision, this.windowMs, this.options, quietMs, this.endpointMs);
    this.state = step.state;
    const next = step.state;
    if (next.phase !== 'speech') this.waited = 0;
    else if (next.silenceMs > 0) this.waited = Math.max(this.waited, waitedFor(next.silenceMs, quietMs));
    else if (before.phase === 'speech' && before.silenceMs > 0) {
      // Speech came back: the pause did not end the turn (a mid-sentence pause, for the senior's profile).
      const pausedMs = this.waited;
      this.waited = 0;
      this.events.speechResumed?.(pausedMs);
    }
    const end = this.analysed;
    if (step.event?.type === 'started') {
      this.endpointMs = this.options.endpointSilenceMs;
      this.events.speechStarted();
      const onsetStart = end - samplesOf(step.event.onsetMs);
      this.emit(Math.max(onsetStart - this.preRollSamples, end - this.history.length, this.emittedUntil), end);
      this.utteranceFrom = end;
    } else if (wasSpeaking) {
      this.emit(this.emittedUntil, end);
      if (step.event?.type === 'stopped') this.events.speechStopped(step.event.reason);
    }
  }

  private emit(from: number, to: number): void {
    if (to > from) this.events.audio(this.recall(from, to));
    this.emittedUntil = to;
  }

  private remember(window: Int16Array, start: number): void {
    const at = start % this.history.length;
    const head = Math.min(window.length, this.history.length - at);
    this.history.set(window.subarray(0, head), at);
    this.history.set(window.subarray(head), 0);
  }

  /** Analysed audio [from, to) from the ring, handed out (a copy the receiver keeps). */
  private recall(from: number, to: number): Int16Array {
    return this.copyHistory(from, to, new Int16Array(to - from));
  }

  /** Copies [from, to) of the ring into `out`; `from` is never older than the ring holds. */
  private copyHistory(from: number, to: number, out: Int16Array): Int16Array {
    const at = from % this.history.length;
    const head = Math.min(to - from, this.history.length - at);
    out.set(this.history.subarray(at, at + head), 0);
    out.set(this.history.subarray(0, to - from - head), head);
    return out;
  }
}
