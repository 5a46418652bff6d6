import type { LanguageModelV3 } from '@ai-sdk/provider';
import type { Logger } from 'pino';
import { z } from 'zod';
import type { Exchange, SegmentSummarizerPort } from '../../machines/derivation.ts';
import { bestEffortSummary } from './llm-defences.ts';

const SegmentSchema = z.object({ summary: z.string().max(2000).nullable() });

const SYSTEM = [
  "Tu résumes une conversation entière entre une personne âgée et son compagnon, pour que le compagnon s'en souvienne la prochaine fois.",
  'Écris 3 à 5 phrases en français, à la troisième personne (« Le senior a parlé de… »), factuelles et neutres :',
  "les sujets abordés, les personnes et projets évoqués, l'humeur générale. Aucun diagnostic.",
  "Ne recopie jamais les phrases de la conversation : reformule. S'il n'y a rien à retenir, renvoie null.",
].join(' ');

/**
 * Tier 2: one closed session becomes one segment summary (Mistral Small). Best-effort like the
 * per-turn summary: any failure, an empty output, or an output that echoes the conversation
 * verbatim gives null.
 */
export class MistralSmallSegmentSummarizer implements SegmentSummarizerPort {
  constructor(
    private readonly model: LanguageModelV3,
    private readonly logger: Pick<Logger, 'warn'>,
    private readonly attemptTimeoutMs = 5000,
  ) {}

  async summarize(exchanges: readonly Exchange[]): Promise<string | null> {
    if (exchanges.length === 0) return null;
    const prompt = exchanges.map((e) => `Personne : ${e.transcript}\nCompagnon : ${e.replyText}`).join('\n');
    const verbatim = exchanges.flatMap((e) => [e.transcript, e.replyText]);
    return bestEffortSummary(this.model, { schema: SegmentSchema, system: SYSTEM, prompt }, verbatim, this.logger, this.attemptTimeoutMs);
  }
}
