import type { Logger } from 'pino';
import { END_OF_TURN_BACKSTOP_SLACK_MS } from '../../machines/voice/turn-taking.machine.ts';
import type { ListenerEvents, OpusDecoderPort } from '../../machines/voice/voice.port.ts';
import { AudioGaps } from './audio-gaps.ts';
import type { SessionListener, VoiceServices, VoiceSessionRequest } from './voice-session.types.ts';

export interface MicrophoneOptions {
  services: VoiceServices;
  request: VoiceSessionRequest;
  log: Logger;
  events: ListenerEvents;
  /** Aborted when the session closes. */
  signal: AbortSignal;
  muted(): boolean;
  /** A reply is playing at the kiosk. */
  replyPlaying(): boolean;
}

/**
 * One session's audio front end: the kiosk's frames (PCM, or Opus packets decoded to 16 kHz), a gating
 * kiosk's gaps filled as silence, into the listener (gate, Silero, endpointing), whose detectors load
 * as the session starts. What the listener hears goes to the turn-taking as events.
 */
export class Microphone {
  private listener: SessionListener | null = null;
  private readonly ready: Promise<void>;
  private loadFailed = false;
  /** Opus input: the microphone stream's decoder (to 16 kHz), freed at close. */
  private readonly decoder: OpusDecoderPort | null;
  /** A gap in a gating kiosk's microphone audio reaches the listener as silence; null: the kiosk does not gate. */
  private readonly gaps: AudioGaps | null;

  private readonly o: MicrophoneOptions;

  constructor(o: MicrophoneOptions) {
    this.o = o;
    const { services, request } = o;
    if (request.input?.encoding === 'opus') {
      if (!services.opus) throw new Error('voice session: Opus negotiated without a codec');
      this.decoder = services.opus.decoder();
    } else this.decoder = null;
    this.gaps = request.gate ? new AudioGaps({ maxFillMs: services.settings.endOfTurn.maxMs + END_OF_TURN_BACKSTOP_SLACK_MS, fill: (pcm) => this.listen(pcm) }) : null;
    this.ready = this.on
      ? services.createListener(o.events).then(
          (listener) => {
            if (o.signal.aborted) listener.close();
            else this.listener = listener;
          },
          (err: unknown) => {
            this.loadFailed = true;
            o.log.error({ err }, 'voice detectors failed to load: voice input is off for this session');
            // session.ready said voiceInput: true; the kiosk learns it is not listened to (the gateway
            // also answers each later microphone frame with this code, at most once a second).
            if (!o.signal.aborted) {
              request.link.send({ type: 'error', code: 'speech_unavailable', message: 'voice input is unavailable for this session (speech detection failed to start): send typed turns' });
            }
          },
        )
      : Promise.resolve();
  }

  /** Off offline (no speech-to-text) and from the moment the session's speech detectors failed to load. */
  get on(): boolean {
    return this.o.services.transcriber !== null && !this.loadFailed;
  }

  pushAudio(pcm: Int16Array): void {
    if (!this.o.signal.aborted) this.gaps?.heard(pcm.length);
    this.listen(pcm);
  }

  /** One Opus packet: null when taken, else why it was dropped (malformed). */
  pushPacket(packet: Uint8Array): string | null {
    if (!this.decoder) return 'this session negotiated PCM microphone audio, not Opus';
    if (!this.on || this.o.muted() || this.o.signal.aborted) return null;
    let pcm: Int16Array;
    try {
      pcm = this.decoder.decode(packet);
    } catch (err) {
      return `a microphone frame is one Opus packet: ${err instanceof Error ? err.message : String(err)} (frame dropped)`;
    }
    this.pushAudio(pcm);
    return null;
  }

  /** The end-of-turn decision: the listener ends the utterance once the pause's silence reaches `silenceMs`. */
  endpointAt(silenceMs: number): void {
    this.listener?.endpointAt(silenceMs);
  }

  /** Forgets what was heard (an utterance under way ends without a word). */
  reset(): void {
    this.listener?.reset();
  }

  close(): void {
    this.gaps?.close();
    this.listener?.close();
    this.listener = null;
    this.decoder?.close();
  }

  private listen(pcm: Int16Array): void {
    if (!this.on || this.o.muted() || this.o.signal.aborted) return;
    // Half-duplex kiosk (no echo cancellation): the microphone hears the reply, so it is not listened to.
    if (!this.o.request.aec && this.o.replyPlaying()) return;
    if (this.listener) return void this.listener.push(pcm).catch(this.pushFailed);
    if (!this.loadFailed) void this.ready.then(() => this.listener?.push(pcm).catch(this.pushFailed));
  }

  // Bound once: the microphone path runs 50 times a second per session and creates no closure per frame.
  private readonly pushFailed = (err: unknown): void => this.o.log.warn({ err }, 'voice detector failed on a window');
}
