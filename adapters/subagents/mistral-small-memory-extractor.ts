import type { LanguageModelV4 } from '@ai-sdk/provider';
import { jsonSchema } from 'ai';
import type { Logger } from 'pino';
import { z } from 'zod';
import {
  MIN_FACT_CONFIDENCE,
  verbatimGuard,
  verbatimSourcesOf,
  type Exchange,
  type ExtractedFact,
  type FactOperation,
  type HeldFact,
  type MemoryExtractorPort,
} from '../../machines/memory/derivation.ts';
import { FACT_CATEGORIES } from '../../machines/memory/memory.port.ts';
import { exchangesPrompt, generateWithDefences, reformulationRules } from './llm-defences.ts';

/** Strict, per fact: an invented category fails this fact's parse, not the batch. */
export const ExtractedFactSchema = z.object({
  content: z.string().trim().min(1).max(500),
  category: z.enum(FACT_CATEGORIES),
  confidence: z.number().min(0).max(1),
});
export const FACT_OPERATIONS = ['add', 'update', 'invalidate', 'none'] as const;
/**
 * One reconciled entry. `op` missing reads as `add` (a model, or an older prompt, that only lists
 * facts); `target` names a held fact by the reference it was shown with (« F3 »).
 */
const ReconciledEntrySchema = z.object({
  op: z.enum(FACT_OPERATIONS).default('add'),
  target: z.string().trim().max(20).nullish(),
});
/** Tolerant outside: extra fields pass, entries are checked one by one. */
const ExtractionSchema = z.looseObject({ facts: z.array(z.unknown()) });
/** The model is asked for the strict shape; what is accepted is ExtractionSchema. */
const ASKED = z.object({
  facts: z.array(
    ExtractedFactSchema.extend({
      op: z.enum(FACT_OPERATIONS),
      target: z.string().nullable(),
      content: ExtractedFactSchema.shape.content.nullable(),
      category: ExtractedFactSchema.shape.category.nullable(),
    }),
  ),
});
const EXTRACTION = jsonSchema<z.infer<typeof ExtractionSchema>>(z.toJSONSchema(ASKED) as Parameters<typeof jsonSchema>[0], {
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
  'Tu reçois aussi les faits déjà connus sur cette personne, chacun avec sa référence (F1, F2…).',
  'Pour chaque fait, donne une opération op :',
  'add pour un fait nouveau ;',
  'update pour un fait connu qui a changé (target : sa référence, et le fait à jour dans content) ;',
  'invalidate pour un fait connu que la conversation montre faux ou dépassé, sans le remplacer (target : sa référence) ;',
  'none pour un fait connu que la conversation confirme sans rien changer (target : sa référence).',
  'Ne redonne jamais un fait déjà connu avec add.',
  reformulationRules('de la conversation'),
].join(' ');

/** How many held facts the extractor is shown, newest first; older copies are still caught by the store's guard. */
export const HELD_FACTS_SHOWN = 50;

/** The held facts as the prompt lists them, by reference: « F1 (contacts) : Sa fille Claire vit à Lyon. » */
const heldPrompt = (held: readonly HeldFact[]) =>
  held.length === 0 ? 'Faits déjà connus : aucun.' : ['Faits déjà connus :', ...held.map((f, i) => `F${i + 1} (${f.category}) : ${f.content}`)].join('\n');
const REFERENCE = /^F?(\d{1,3})$/i;

/**
 * Post-session fact extraction on Mistral Small (seed: MistralSmallMemoryExtractor). Each fact is
 * checked alone: a malformed, unsure or verbatim one is dropped, the others kept.
 */
export class MistralSmallMemoryExtractor implements MemoryExtractorPort {
  private readonly model: LanguageModelV4;
  private readonly logger: Pick<Logger, 'warn'>;
  private readonly attemptTimeoutMs: number;

  constructor(
    model: LanguageModelV4,
    logger: Pick<Logger, 'warn'>,
    attemptTimeoutMs = 5000,
  ) {
    this.model = model;
    this.logger = logger;
    this.attemptTimeoutMs = attemptTimeoutMs;
  }

  /** The session's facts, all new (nothing held shown). */
  async extract(exchanges: Exchange[]): Promise<ExtractedFact[]> {
    return (await this.reconcile(exchanges, [])).flatMap((o) => (o.op === 'add' ? [o.fact] : []));
  }

  /**
   * Each entry is checked alone: a malformed, unsure or verbatim fact, or a target that names no
   * fact it was shown, drops that entry (a warn log that quotes nothing), never the batch. Targets
   * resolve to the held facts' ids here: the model never writes an id, and can only touch what it saw.
   */
  async reconcile(exchanges: Exchange[], held: readonly HeldFact[]): Promise<FactOperation[]> {
    if (exchanges.length === 0) return [];
    const shown = held.slice(0, HELD_FACTS_SHOWN);
    let entries: unknown[];
    try {
      const prompt = `${heldPrompt(shown)}\n\nConversation :\n${exchangesPrompt(exchanges)}`;
      const object = await generateWithDefences(this.model, { schema: EXTRACTION, system: SYSTEM, prompt }, this.attemptTimeoutMs);
      entries = object.facts;
    } catch (err) {
      this.logger.warn({ err }, 'fact extraction failed: no facts from this session');
      return [];
    }
    const verbatim = verbatimGuard(verbatimSourcesOf(exchanges));
    const operations: FactOperation[] = [];
    for (const [index, entry] of entries.entries()) {
      const shape = ReconciledEntrySchema.safeParse(entry);
      if (!shape.success || typeof entry !== 'object' || entry === null) {
        this.logger.warn({ index, issues: shape.success ? [] : shape.error.issues.map((i) => `${i.path.join('.')}: ${i.code}`) }, 'extracted fact dropped: malformed');
        continue;
      }
      const { op, target: reference } = shape.data;
      const targetIndex = REFERENCE.exec(reference ?? '')?.[1];
      const target = targetIndex === undefined ? undefined : shown[Number(targetIndex) - 1]?.id;
      if ((op === 'update' || op === 'invalidate') && !target) {
        this.logger.warn({ index, op }, 'extracted fact dropped: its target is not a fact it was shown');
        continue;
      }
      if (op === 'invalidate') operations.push({ op, target: target! });
      else if (op === 'none') operations.push({ op, target: target ?? null });
      else {
        const fact = this.checkedFact(entry, index, verbatim);
        if (fact) operations.push(op === 'update' ? { op, target: target!, fact } : { op, fact });
      }
    }
    return operations;
  }

  private checkedFact(entry: object, index: number, verbatim: ReturnType<typeof verbatimGuard>): ExtractedFact | null {
    const parsed = ExtractedFactSchema.safeParse(entry);
    if (!parsed.success) {
      this.logger.warn({ index, issues: parsed.error.issues.map((i) => `${i.path.join('.')}: ${i.code}`) }, 'extracted fact dropped: malformed');
      return null;
    }
    if (parsed.data.confidence < MIN_FACT_CONFIDENCE) return null;
    const rule = verbatim(parsed.data.content);
    if (rule) {
      this.logger.warn({ index, rule }, 'extracted fact dropped: it repeated the conversation verbatim');
      return null;
    }
    return parsed.data;
  }
}
