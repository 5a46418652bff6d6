/**
 * The semantic cache's model check (SEMANTIC_CACHE_VERIFY=model): whether a question similar to one
 * already answered asks the same thing, so that the earlier reply answers it. Asked only of a candidate
 * the threshold and the near-miss guard already let through: a verdict can only narrow what they serve.
 */
export interface CacheVerifierPort {
  /** `previous`: the exchange both questions follow, when they lean on it (a follow-up). */
  sameQuestion(input: { cached: string; asked: string; previous: { question: string; reply: string } | null }, signal: AbortSignal): Promise<boolean>;
}
