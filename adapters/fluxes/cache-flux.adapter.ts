import { readFileSync } from 'node:fs';
import { z } from 'zod';
import type { CacheFluxPort, SeniorProfile } from '../../machines/session/ports.ts';

export type Intent = 'greeting';

/** Regexes resolved in order; the first match names the intent. */
const INTENT_PATTERNS: ReadonlyArray<readonly [RegExp, Intent]> = [[/^(bonjour|salut|coucou|bonsoir)\b/i, 'greeting']];

/** A long turn is never a trivial formula. */
export const MAX_TRANSCRIPT_LEN_FOR_CACHE = 30;

const VariationSchema = z.object({ opening: z.string().min(1), rest: z.string().min(1) });
const VariationsFileSchema = z.object({
  greeting: z.array(VariationSchema).min(1),
  sos_fallback: z.string().min(1),
  sos_after_partial: z.string().min(1),
});
export type CacheVariations = z.infer<typeof VariationsFileSchema>;

export const DEFAULT_VARIATIONS_FILE = new URL('./cache-variations.seed.json', import.meta.url);

/** Loaded once at boot; a malformed seed file stops start-up with the zod message. */
export function loadCacheVariations(file: URL | string = DEFAULT_VARIATIONS_FILE): CacheVariations {
  return VariationsFileSchema.parse(JSON.parse(readFileSync(file, 'utf8')));
}

export function resolveIntent(transcript: string): Intent | null {
  const text = transcript.trim();
  if (text.length > MAX_TRANSCRIPT_LEN_FOR_CACHE) return null;
  for (const [pattern, intent] of INTENT_PATTERNS) if (pattern.test(text)) return intent;
  return null;
}

/**
 * Flux 1. One instance per live session: its only mutable state is the per-intent
 * cursor, so the kiosk never hears the same line twice in a row. Templates are static,
 * fed by no upstream store, hence no invalidation contract.
 */
export class CacheFluxAdapter implements CacheFluxPort {
  private readonly cursors = new Map<Intent, number>();

  private readonly variations: CacheVariations;

  constructor(variations: CacheVariations) {
    this.variations = variations;
  }

  resolve(transcript: string, profile: SeniorProfile): string | null {
    const intent = resolveIntent(transcript);
    if (intent === null) return null;
    // A first session deserves a real first welcome, composed by the agent.
    if (intent === 'greeting' && profile.isFreshSenior) return null;
    const options = this.variations[intent];
    const cursor = this.cursors.get(intent) ?? 0;
    this.cursors.set(intent, (cursor + 1) % options.length);
    const { opening, rest } = options[cursor]!;
    const name = profile.preferredName?.trim();
    return name ? `${opening} ${name}, ${rest}` : `${opening}, ${rest}`;
  }

  sosFallback(): string {
    return this.variations.sos_fallback;
  }

  sosAfterPartial(): string {
    return this.variations.sos_after_partial;
  }
}
