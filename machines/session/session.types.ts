import type { AgentPausePort, CacheFluxPort, ChatMessage, Flux, RecalledFact, SeniorProfile } from './ports.ts';
import type { WindowBudget } from './window.ts';

// Values, not only types: the kiosk protocol's schemas (runtime/protocol) enumerate them.
export const CLOSE_REASONS = ['ended', 'pause', 'disconnected', 'replaced', 'shutdown', 'operator', 'erased'] as const;
export type CloseReason = (typeof CLOSE_REASONS)[number];
/**
 * `shutdown`: the process shut down (SIGTERM) while the turn was in flight. `rate_limited`: the
 * agent's provider asked to wait (Retry-After), on this turn's call or for longer than its budget allows.
 */
export const SOS_REASONS = ['budget', 'model_error', 'empty_reply', 'flux_error', 'stall', 'shutdown', 'rate_limited'] as const;
export type SosReason = (typeof SOS_REASONS)[number];

/**
 * While the provider's pause lasts, the agent is called (once it is over) only if its call still has
 * this long before the turn's budget runs out; otherwise the SOS line comes at once, not at the end
 * of a wait. Less would rarely bring a first chunk in time: the model's first token over the network
 * takes a few hundred ms at best (the benchmarks' fakes give it 300).
 */
export const AGENT_CALL_MIN_MS = 500;

/** Defaults for the bounds on a streaming reply (config: AGENT_STALL_MS, REPLY_MAX_MS). */
export const DEFAULT_AGENT_STALL_MS = 1500;
export const DEFAULT_REPLY_MAX_MS = 15_000;

/** One exchange, kept in RAM only; it reaches the close-time jobs through `SessionClosed`. */
export interface Turn {
  turnId: string;
  transcript: string;
  reply: string;
  flux: Flux;
  latencyMs: number;
  interrupted: boolean;
  sosReason?: SosReason;
  startedAt: number;
}

/** The turn in flight, as the machine tracks it between its first flux and its end. */
export interface CurrentTurn {
  turnId: string;
  transcript: string;
  startedAt: number;
  reply: string;
  chunks: number;
  retries: number;
  facts: RecalledFact[];
  cacheReply: string | null;
  /** From a semantic-cache miss: lets the runtime store this turn's reply if it completes. */
  cacheTicket: unknown;
  /** The agent called a tool (search_memory): its reply depends on that call and is never cached. */
  usedTools: boolean;
  /** When the latest chunk arrived, on the actor's clock. */
  lastChunkAt: number;
  /** The `lastChunkAt` the stall timer was armed from: a later one means chunks came since. */
  stallArmedFrom: number;
}

/** What a voice session is doing, as operators see it (voice mode only; `off` for text kiosks). */
export type VoiceActivity = 'off' | 'listening' | 'user_speaking' | 'thinking' | 'speaking';

/** Per-turn voice stage timings (ms), as far as the turn got: never text or audio. */
export interface VoiceStages {
  turnId: string;
  endpointingMs?: number;
  transcriptionMs?: number;
  firstTokenMs?: number;
  firstAudioMs?: number;
}

export interface SessionInput {
  sessionId: string;
  seniorId: string;
  profile: SeniorProfile;
  cacheFlux: CacheFluxPort;
  turnBudgetMs: number;
  sessionPauseMs: number;
  kioskGraceMs: number;
  /** Longest silence between two chunks of a reply already being spoken. */
  agentStallMs?: number;
  /** Longest a whole reply may take, first chunk to last. */
  replyMaxMs?: number;
  windowBudget?: WindowBudget;
  /** The agent's provider's pause (Retry-After), shared by every session; without it, the agent is never held back. */
  agentPause?: AgentPausePort;
}

export interface SessionContext extends Omit<SessionInput, 'windowBudget' | 'agentStallMs' | 'replyMaxMs'> {
  windowBudget: WindowBudget;
  agentStallMs: number;
  replyMaxMs: number;
  /** Tier 1: the folded older part of the window, summarized (RAM only, never persisted). */
  runningSummary: string | null;
  /** Messages being folded right now (the oldest ones of the window). */
  folding: number;
  startedAt: number;
  turns: Turn[];
  window: ChatMessage[];
  current: CurrentTurn | null;
  closeReason: CloseReason | null;
  lastSosReason: SosReason | null;
  /** The latest voice turn's stage timings (voice mode). */
  voiceStages: VoiceStages | null;
  /** When the senior's latest turn arrived (before the first: the session's start), on the actor's clock. */
  lastTurnAt: number;
  /** The `lastTurnAt` the pause timer was armed from: a later one means turns came since. */
  pauseArmedFrom: number;
}

export type SessionEvent =
  | { type: 'TURN'; turnId: string; transcript: string }
  /** Raised by the machine itself: CacheFlux had no answer for this turn, which goes on to the other fluxes. */
  | { type: 'CACHE.MISS'; turnId: string; transcript: string }
  /** `heard`: in voice mode, the part of the reply the senior actually heard (from the audio played). */
  | { type: 'INTERRUPT'; turnId: string; heard?: string }
  /** Voice mode: the runtime's audio pipeline reports its state (never per audio frame). */
  | { type: 'VOICE.STATE'; state: VoiceActivity; stages?: VoiceStages }
  | { type: 'CLOSE'; reason: CloseReason }
  | { type: 'SOCKET.LOST' }
  | { type: 'SOCKET.ATTACHED' }
  | { type: 'AGENT.CHUNK'; text: string }
  | { type: 'AGENT.TOOL'; name: string }
  | { type: 'AGENT.DONE' }
  /** `throttled`: the provider asked to wait (AgentThrottledError). */
  | { type: 'AGENT.FAILED'; throttled?: boolean };

export interface ReplyDone {
  type: 'reply.done';
  turnId: string;
  text: string;
  flux: Flux;
  latencyMs: number;
  interrupted?: true;
  /** For metrics; not part of the kiosk frame. */
  sosReason?: SosReason;
  /** A completed agent reply the semantic cache may store; not part of the kiosk frame. */
  cacheTicket?: unknown;
}

/** The typed close event: the in-memory turns, for the close-time jobs. Never persisted as is. */
export interface SessionClosed {
  type: 'SessionClosed';
  sessionId: string;
  seniorId: string;
  reason: CloseReason;
  startedAt: number;
  endedAt: number;
  turns: Turn[];
}

export type SessionEmitted = { type: 'reply.delta'; turnId: string; text: string } | ReplyDone | SessionClosed;
