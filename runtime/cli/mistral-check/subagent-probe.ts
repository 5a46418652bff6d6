import { createModels } from '../../../adapters/models/model-provider.ts';
import { MistralSmallCacheVerifier } from '../../../adapters/subagents/mistral-small-cache-verifier.ts';
import { honouringRetryAfter, messageOf, type CheckContext } from './context.ts';
import { formatMs } from './report.ts';
import { within } from './waits.ts';

/** Two questions no one would answer alike: the check's verdict must be « not the same ». */
const DIFFERENT = { cached: 'Quel temps fera-t-il demain ?', asked: 'Quel temps faisait-il hier ?' } as const;

/**
 * One structured call on the sub-agent model, as the semantic cache's model check makes it (the same adapter,
 * JSON schema and all): the mood, the summaries, the facts and the dream make the same kind of call. Its time
 * against SEMANTIC_CACHE_VERIFY_BUDGET_MS says whether the model check could ever confirm within its bound.
 */
export async function subagentProbe(ctx: CheckContext): Promise<void> {
  const { config } = ctx;
  const budgetMs = config.SEMANTIC_CACHE_VERIFY_BUDGET_MS;
  const model = createModels({ apiKey: ctx.apiKey, baseUrl: config.MISTRAL_BASE_URL, agentModelId: config.MISTRAL_AGENT_MODEL, subagentModelId: config.MISTRAL_SUBAGENT_MODEL, env: config.KOHAMI_ENV }).subagent;
  const verifier = new MistralSmallCacheVerifier(model, ctx.bounds.callMs);
  let start = 0;
  try {
    const same = await honouringRetryAfter(ctx, 'sub-agent', () => {
      start = performance.now();
      return within(verifier.sameQuestion({ ...DIFFERENT, previous: null }, ctx.signal), ctx.bounds.callMs, 'no answer', ctx.signal);
    });
    const took = performance.now() - start;
    const answered = `${config.MISTRAL_SUBAGENT_MODEL} answered the schema in ${formatMs(took)}`;
    if (same) return ctx.report.set('subagent', 'note', `${answered}, but called « ${DIFFERENT.cached} » and « ${DIFFERENT.asked} » the same question: the model check would serve such a pair`);
    if (took <= budgetMs) return ctx.report.set('subagent', 'ok', `${answered} (SEMANTIC_CACHE_VERIFY_BUDGET_MS ${budgetMs} ms), « not the same » for two different questions`);
    ctx.report.set('subagent', 'note', `${answered}, over SEMANTIC_CACHE_VERIFY_BUDGET_MS (${budgetMs} ms): with SEMANTIC_CACHE_VERIFY=model such a check is a miss`);
  } catch (err) {
    ctx.report.set('subagent', 'break', `failed: ${messageOf(err)} — every sub-agent call (mood, summaries, facts, the dream, the cache's model check) is made this way`);
  }
}
