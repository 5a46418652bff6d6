import type { VoiceActivity } from '../session/session.types.ts';
import type { EndOfTurnSettings } from './end-of-turn.ts';
import type { PauseProfile } from './pause-profile.ts';

/** What the turn-taking machine is set with, for one session (docs/voice.md names each setting). */
export interface TurnTakingSettings {
  endOfTurn: EndOfTurnSettings;
  /** STT_EARLY_FLUSH_MS: the pause's silence at which its text is flushed (0: off). */
  earlyFlushMs: number;
  /** STT_RECHECK_MS: the silence at which a flushed text that did not close is asked for again (0: off). */
  recheckMs: number;
  /** STT_STREAMING_DELAY_MS: how far behind the audio the recognizer's words come. */
  sttDelayMs: number;
  /** BARGE_IN_MIN_MS. */
  bargeInMinMs: number;
  /** FALSE_INTERRUPTION_MS: speech with no word by then pauses the reply. */
  falseInterruptionMs: number;
  /** IDLE_CHECKIN_MS (0: off). */
  idleCheckinMs: number;
  /** The kiosk cancels its own echo: the senior may speak over a reply. */
  aec: boolean;
  /** The preemptive turn (PREEMPTIVE_TURN): null when off. */
  preemption: { leadMs: number; maxPerUtterance: number } | null;
}

export interface TurnTakingInput {
  settings: TurnTakingSettings;
  /** The senior's pause profile, under the `conversation` consent only (null: no use, no update). */
  profile: PauseProfile | null;
}

/** The listener's reading after it analysed a chunk of microphone audio (no audio in it). */
export interface Heard {
  /** Confirmed speech so far in the utterance. */
  speechMs: number;
  /** Confident speech stopped inside the utterance: the endpointing silence is counting. */
  paused: boolean;
  /** Silence so far in the current pause (0 outside one), in ms of audio. */
  silenceMs: number;
  /** Pauses started so far: tells a new pause from the one already decided. */
  pauses: number;
  /** The speech's recent level against the utterance's, dB (negative: falling); null when unknown. */
  levelDb: number | null;
  /** Audio of the utterance since speech started (what the recognizer has had time to hear). */
  sinceStartMs: number;
}

/** The early flush in the utterance: which pause it was made in and how it stands (no text, no audio). */
export interface FlushState {
  /** The listener pause of the last flush (-1: none yet). */
  pause: number;
  /** Flushes made in that pause: the first, then at most one recheck. */
  flushes: number;
  /** A flush is in flight. */
  pending: boolean;
  /** A flush failed: the utterance cannot be transcribed whole. */
  failed: boolean;
  /** The pause's audio is held back from the recognizer (nothing said since the flush). */
  holding: boolean;
  /** The flushed text closes its sentence (the recheck is not needed). */
  closed: boolean;
}

/** The utterance being spoken, as the machine follows it. */
export interface Utterance {
  id: number;
  /** The whole interim transcript so far, flushed segments first (never stored, never logged). */
  interim: string;
  /** The interim when the current pause began. */
  interimAtPause: string;
  /** The listener pause decided last. */
  pause: number;
  heard: Heard;
  /** When confirmed speech last grew (the machine's clock). */
  lastSpeechAt: number;
  /** The interim text last handed to the prefetch (never the same text twice). */
  prefetched: string;
  /** The text a speculation runs on (null: none). */
  speculation: string | null;
  /** Speculations started in this utterance. */
  speculations: number;
  /** It paused the reply, which then resumed (a false interruption, counted once). */
  resumed: boolean;
  flush: FlushState;
}

/** An utterance whose speech stopped, handed to the transcription and given back with its final text. */
export interface EndedUtterance {
  id: number;
  speechMs: number;
  /** The endpointing stage: last speech → speech stopped. */
  endpointingMs: number;
  speculation: string | null;
  resumed: boolean;
}

export interface TurnTakingContext {
  settings: TurnTakingSettings;
  profile: PauseProfile | null;
  /** Mid-sentence pauses heard (ms), written back at close; bounded. */
  heardPauses: number[];
  utterance: Utterance | null;
  /** The utterance whose speech paused the reply (resumed if it ends without a turn). */
  pausedFor: number | null;
  nextId: number;
  muted: boolean;
}

export type TurnTakingEvent =
  // The listener.
  | { type: 'SPEECH.STARTED' }
  | { type: 'HEARD'; heard: Heard }
  | { type: 'SPEECH.RESUMED'; pauseMs: number }
  | { type: 'SPEECH.STOPPED' }
  // The recognizer: `text` is the utterance's whole text so far, flushed segments first.
  | { type: 'INTERIM'; text: string }
  | { type: 'FLUSHED'; utterance: number; text: string }
  | { type: 'FLUSH.FAILED'; utterance: number }
  /** The transcription could not flush (no stream): the pause may try again. */
  | { type: 'FLUSH.SKIPPED'; utterance: number }
  /** The speculation could not start (CacheFlux answers the text itself, the session is not between turns). */
  | { type: 'SPECULATION.REFUSED'; utterance: number }
  | { type: 'FINAL'; utterance: EndedUtterance; transcript: string }
  | { type: 'TRANSCRIPTION.FAILED'; utterance: EndedUtterance }
  // The reply.
  | { type: 'REPLY.STARTED' }
  | { type: 'REPLY.PLAYING' }
  | { type: 'REPLY.ENDED'; played: boolean }
  // The session.
  | { type: 'TYPED' }
  | { type: 'CHECKIN.SPOKEN' }
  | { type: 'MUTE'; muted: boolean }
  // Raised by the machine on its own clock.
  | { type: 'BACKSTOP'; pause: number }
  | { type: 'LEAD'; pause: number };

/** What the machine asks of the session's wiring (emitted; none of them answers synchronously). */
export type TurnTakingCommand =
  | { type: 'utterance.started'; id: number; playing: boolean }
  | { type: 'utterance.ended'; utterance: EndedUtterance; playing: boolean }
  | { type: 'utterance.dropped' }
  /** End the utterance once the pause's silence reaches `silenceMs` (now if it has): the listener counts it. */
  | { type: 'end.at'; silenceMs: number }
  /** `first`: the pause's first flush, whose recheck may still come (the pause's audio is kept until then). */
  | { type: 'flush'; utterance: number; pause: number; first: boolean }
  /** The pause's audio since the flush to the recognizer, then flush again. */
  | { type: 'recheck'; utterance: number; pause: number }
  /** The senior goes on after a flush: the held audio's last pre-roll ahead of the new speech. */
  | { type: 'segment.resumed'; utterance: number }
  | { type: 'prefetch'; text: string }
  | { type: 'speculation.start'; utterance: number; text: string }
  | { type: 'speculation.drop'; utterance: number }
  | { type: 'turn'; transcript: string; utterance: EndedUtterance; adopt: boolean; interrupting: boolean }
  | { type: 'reply.pause' }
  | { type: 'reply.resume' }
  | { type: 'reply.cut' }
  | { type: 'checkin' }
  | { type: 'activity'; state: VoiceActivity }
  | { type: 'metric'; name: 'barge_in'; outcome: 'interrupted' | 'backchannel_ignored' | 'false_interruption' }
  | { type: 'metric'; name: 'early_flush'; outcome: 'rechecked' | 'resumed' };
