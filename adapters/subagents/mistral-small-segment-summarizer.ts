import type { LanguageModelV4 } from '@ai-sdk/provider';
import type { Logger } from 'pino';
import { z } from 'zod';
import { verbatimSourcesOf, type Exchange, type SegmentSummarizerPort } from '../../machines/memory/derivation.ts';
import { bestEffortSummary, exchangesPrompt, reformulationRules } from './llm-defences.ts';

const SegmentSchema = z.object({ summary: z.string().max(2000).nullable() });

const SYSTEM = [
  "Tu résumes une conversation entière entre une personne âgée et son compagnon, pour que le compagnon s'en souvienne la prochaine fois.",
  'Écris 3 à 5 phrases en français, à la troisième personne (« Le senior a parlé de… »), factuelles et neutres :',
  "les sujets abordés, les personnes et projets évoqués, l'humeur générale. Aucun diagnostic.",
  reformulationRules('de la conversation'),
  "S'il n'y a rien à retenir, renvoie null.",
].join(' ');

/**
 * Tier 2: one closed session becomes one segment summary (Mistral Small). Best-effort like the
 * per-turn summary: any failure, an empty output, or an output the verbatim guard refuses
 * gives null.
 */
export class MistralSmallSegmentSummarizer implements SegmentSummarizerPort {
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

  async summarize(exchanges: readonly Exchange[]): Promise<string | null> {
    if (exchanges.length === 0) return null;
    const request = { schema: SegmentSchema, system: SYSTEM, prompt: exchangesPrompt(exchanges) };
    return bestEffortSummary(this.model, request, verbatimSourcesOf(exchanges), this.logger, this.attemptTimeoutMs);
  }
}
