import type { LanguageModelV3 } from '@ai-sdk/provider';
import { jsonSchema } from 'ai';
import type { Logger } from 'pino';
import { z } from 'zod';
import { MIN_FACT_CONFIDENCE, verbatimGuard, verbatimSourcesOf, type Exchange, type ExtractedFact, type MemoryExtractorPort } from '../../machines/memory/derivation.ts';
import { FACT_CATEGORIES } from '../../machines/memory/memory.port.ts';
import { exchangesPrompt, generateWithDefences, reformulationRules } from './llm-defences.ts';

/** Strict, per fact: an invented category fails this fact's parse, not the batch. */
export const ExtractedFactSchema = z.object({
  content: z.string().trim().min(1).max(500),
  category: z.enum(FACT_CATEGORIES),
  confidence: z.number().min(0).max(1),
});
/** Tolerant outside: extra fields pass, entries are checked one by one. */
const ExtractionSchema = z.looseObject({ facts: z.array(z.unknown()) });
/** The model is asked for the strict shape; what is accepted is ExtractionSchema. */
const EXTRACTION = jsonSchema<z.infer<typeof ExtractionSchema>>(z.toJSONSchema(z.object({ facts: z.array(ExtractedFactSchema) })) as Parameters<typeof jsonSchema>[0], {
  validate: (value) => {
    const parsed = ExtractionSchema.safeParse(value);
    return parsed.success ? { success: true, value: parsed.data } : { success: false, error: parsed.error };
  },
});

const SYSTEM = [
  "Tu extrais d'une conversation entre une personne âgée et son compagnon les faits durables sur cette personne",
  '(famille, proches, goûts, habitudes, lieux, santé déclarée, vue, données corporelles).',
  `Chaque fait : une phrase courte à la troisième personne, une catégorie parmi ${FACT_CATEGORIES.join(', ')}, et une confiance entre 0 et 1.`,
  "Aucun fait passager (la météo du jour, l'heure qu'il est).",
  reformulationRules('de la conversation'),
].join(' ');

/**
 * Post-session fact extraction on Mistral Small (seed: MistralSmallMemoryExtractor). Each fact is
 * checked alone: a malformed, unsure or verbatim one is dropped, the others kept.
 */
export class MistralSmallMemoryExtractor implements MemoryExtractorPort {
  constructor(
    private readonly model: LanguageModelV3,
    private readonly logger: Pick<Logger, 'warn'>,
    private readonly attemptTimeoutMs = 5000,
  ) {}

  async extract(exchanges: Exchange[]): Promise<ExtractedFact[]> {
    if (exchanges.length === 0) return [];
    let entries: unknown[];
    try {
      const object = await generateWithDefences(this.model, { schema: EXTRACTION, system: SYSTEM, prompt: exchangesPrompt(exchanges) }, this.attemptTimeoutMs);
      entries = object.facts;
    } catch (err) {
      this.logger.warn({ err }, 'fact extraction failed: no facts from this session');
      return [];
    }
    const verbatim = verbatimGuard(verbatimSourcesOf(exchanges));
    const facts: ExtractedFact[] = [];
    for (const [index, entry] of entries.entries()) {
      const parsed = ExtractedFactSchema.safeParse(entry);
      if (!parsed.success) {
        this.logger.warn({ index, issues: parsed.error.issues.map((i) => `${i.path.join('.')}: ${i.code}`) }, 'extracted fact dropped: malformed');
        continue;
      }
      if (parsed.data.confidence < MIN_FACT_CONFIDENCE) continue;
      const rule = verbatim(parsed.data.content);
      if (rule) {
        this.logger.warn({ index, rule }, 'extracted fact dropped: it repeated the conversation verbatim');
        continue;
      }
      facts.push(parsed.data);
    }
    return facts;
  }
}
