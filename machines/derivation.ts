import type { FactCategory } from './memory.port.ts';

/** Mood tiers over a 0–100 score (documented in the README). */
export const MOOD_TIERS = ['preoccupant', 'melancolique', 'neutre', 'enjoue'] as const;
export type MoodTier = (typeof MOOD_TIERS)[number];

export function moodTier(score: number): MoodTier {
  if (score < 30) return 'preoccupant';
  if (score < 50) return 'melancolique';
  if (score < 70) return 'neutre';
  return 'enjoue';
}

/** One exchange as the derivations see it (in memory only). */
export interface Exchange {
  transcript: string;
  replyText: string;
}

export interface MoodClassifierPort {
  /** A 0–100 score; throws when no score could be derived. */
  classify(exchange: Exchange): Promise<number>;
}

export interface ConversationSummarizerPort {
  /**
   * 2–3 neutral third-person sentences about `exchange`, or null: best-effort, never throws.
   * The output is also refused when it echoes any of `session` (the other exchanges in memory).
   */
  summarize(exchange: Exchange, session?: readonly Exchange[]): Promise<string | null>;
}

export interface SegmentSummarizerPort {
  /** A few neutral third-person sentences about a whole session, or null: best-effort, never throws. */
  summarize(exchanges: readonly Exchange[]): Promise<string | null>;
}

export interface ExtractedFact {
  content: string;
  category: FactCategory;
  confidence: number;
}

export interface MemoryExtractorPort {
  /** Durable facts from a session's exchanges; never throws, an empty list on failure. */
  extract(exchanges: Exchange[]): Promise<ExtractedFact[]>;
}

export const MIN_FACT_CONFIDENCE = 0.6;
/** A fact this long found literally in the transcript was copied, not synthesized. */
export const COPY_GUARD_MIN_CHARS = 50;
/** A derived text sharing this many consecutive words with its input re-includes the verbatim. */
export const ECHO_MIN_WORDS = 8;

const words = (text: string) =>
  text
    .normalize('NFC')
    .toLowerCase()
    .split(/[^\p{L}\p{N}]+/u)
    .filter(Boolean);

const squash = (text: string) => text.normalize('NFC').toLowerCase().replace(/\s+/g, ' ').trim();

/** True when `output` re-includes a run of ECHO_MIN_WORDS consecutive words of any input. */
export function echoesTranscriptVerbatim(output: string, inputs: readonly string[], minWords = ECHO_MIN_WORDS): boolean {
  const runs = new Set<string>();
  for (const input of inputs) {
    const w = words(input);
    for (let i = 0; i + minWords <= w.length; i++) runs.add(w.slice(i, i + minWords).join(' '));
  }
  if (runs.size === 0) return false;
  const o = words(output);
  for (let i = 0; i + minWords <= o.length; i++) if (runs.has(o.slice(i, i + minWords).join(' '))) return true;
  return false;
}

/** The extractor's copy-paste guard: a long fact that appears literally in the transcript. */
export function isCopiedFact(content: string, transcript: string): boolean {
  const fact = squash(content);
  return fact.length >= COPY_GUARD_MIN_CHARS && squash(transcript).includes(fact);
}
