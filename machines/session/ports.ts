/**
 * The ports the session machine depends on. Adapters implement them; the machine
 * reaches them only through injected actors, so it never touches an SDK or a driver.
 */
import type { PauseProfile } from '../voice/pause-profile.ts';

/** A value, not only a type: the kiosk protocol's schemas (runtime/protocol) enumerate it. */
export const FLUXES = ['cache', 'recall', 'agent', 'semantic_cache', 'sos', 'neutral'] as const;
export type Flux = (typeof FLUXES)[number];

export interface SeniorProfile {
  preferredName: string | null;
  /** First session ever: no onboarding slot filled, so no « ravi de vous revoir ». */
  isFreshSenior: boolean;
  /** Tier 2: summaries of the most recent sessions, newest first, injected as quiet background. */
  recentSegments?: ReadonlyArray<{ summary: string; endedAt: string }>;
  /** The narrative memory: the deployment's or the senior's persona (the built-in one otherwise). */
  persona?: string | null;
  /** The next session's preparation, written by the nightly consolidation. */
  compass?: CompassView | null;
  /** What the companion knows of the senior, built by the consolidation, correctable by an admin. */
  interlocutor?: InterlocutorView | null;
  /** Their mid-sentence pauses (numbers only), for voice mode's end-of-turn waits; only under the `conversation` consent. */
  pauses?: PauseProfile | null;
}

export interface CompassView {
  resumeWith?: string | undefined;
  questionsToAsk?: string[];
  avoid?: string[];
  uncertainties?: string[];
  tone?: string | undefined;
  topicsToExplore?: string[];
}

export interface InterlocutorView {
  role?: string | undefined;
  interests?: string[];
  recurringTopics?: string[];
  patterns?: string[];
}

/** Flux 1: pre-written replies for trivial turns, zero model call. */
export interface CacheFluxPort {
  /** A pre-written reply, or null for a miss (the turn goes on to the next flux). */
  resolve(transcript: string, profile: SeniorProfile): string | null;
  /** The degraded-path line; never served for a normal turn. */
  sosFallback(): string;
  /** Said after a reply cut short (stalled or failed mid-sentence), so the senior is not left hanging. */
  sosAfterPartial(): string;
}

export interface ChatMessage {
  role: 'user' | 'assistant';
  content: string;
  /** An assistant reply cut by barge-in: only what the kiosk received is kept. */
  interrupted?: boolean;
}

export interface RecalledFact {
  content: string;
  category: string;
}

export interface AgentRequest {
  seniorId: string;
  profile: SeniorProfile;
  /** Recent messages, oldest first, ending with the current user turn. */
  window: ChatMessage[];
  facts: RecalledFact[];
  /** Tier 1: what the window's folded older part said, in a few sentences (RAM only). */
  runningSummary?: string | null;
}

/** What the agent's stream yields: text to speak, or news that it called a tool (such a reply is never cached). */
export type AgentChunk = { type: 'text'; text: string } | { type: 'tool'; name: string };

/**
 * The agent's provider asked to wait (HTTP 429, or a 503 naming a Retry-After): the turn ends on the
 * SOS line rather than call again — the one quick retry would be refused the same way.
 */
export class AgentThrottledError extends Error {
  override name = 'AgentThrottledError';
}

/** What is left of the wait the agent's provider asked for (Retry-After), read before each agent call. */
export interface AgentPausePort {
  /** ms; 0 when the agent may be called at once. */
  readonly leftMs: number;
}

/**
 * Flux 3: a streaming model reply. Yields chunks; throws on failure (AgentThrottledError when the
 * provider asked to wait); stops on abort.
 */
export interface AgentPort {
  stream(request: AgentRequest, signal: AbortSignal): AsyncIterable<AgentChunk>;
}

/** Tier 3: what the agent's `search_memory` tool reaches, on demand (consent-gated). */
export interface MemorySearchPort {
  searchMemory(seniorId: string, query: string, signal?: AbortSignal): Promise<{ segments: string[]; facts: string[] }>;
}

/** What Flux 2 hands on: either facts for the agent, or a final reply that ends the turn. */
export type RecallOutcome = { kind: 'facts'; facts: RecalledFact[] } | { kind: 'reply'; text: string; flux: Flux };

/** Flux 2: consent-gated memory recall. */
export interface RecallPort {
  recall(input: { seniorId: string; transcript: string }, signal: AbortSignal): Promise<RecallOutcome>;
}

/** What a semantic-cache lookup hands on: a reply, or a ticket to store the agent's reply under. */
export type CacheLookup = { kind: 'hit'; reply: string } | { kind: 'miss'; ticket: unknown } | { kind: 'bypass' };

/** The semantic cache in front of the agent's model call. */
export interface SemanticCachePort {
  lookup(
    input: { seniorId: string; question: string; previous: { question: string; reply: string } | null; promptVersion: string },
    signal: AbortSignal,
  ): Promise<CacheLookup>;
}

/** Tier 1: folds the oldest part of the live window into the running summary (RAM only). */
export interface WindowSummarizerPort {
  summarize(input: { previousSummary: string | null; messages: ChatMessage[] }, signal: AbortSignal): Promise<string | null>;
}
