import type { LanguageModelV3 } from '@ai-sdk/provider';
import type { Logger } from 'pino';
import { z } from 'zod';
import { echoesTranscriptVerbatim, type ConversationSummarizerPort, type Exchange } from '../../machines/derivation.ts';
import { exchangePrompt, generateWithDefences } from './llm-defences.ts';

const SummarySchema = z.object({ summary: z.string().max(1000).nullable() });

const SYSTEM = [
  "Tu résumes un échange entre une personne âgée et son compagnon de conversation, pour le tableau de bord d'un aidant.",
  'Écris 2 à 3 phrases en français, à la troisième personne (« Le senior a évoqué… »), sur un ton factuel et neutre.',
  "Aucun diagnostic, aucune interprétation médicale. Ne recopie jamais les phrases de l'échange : reformule.",
  "S'il n'y a rien à résumer, renvoie null.",
].join(' ');

/**
 * The per-turn summary (seed: MistralSmallConversationSummarizer). Best-effort: a timeout,
 * a transport or schema failure, an empty output, or an output that echoes the verbatim
 * all give null, and the mood row is written anyway.
 */
export class MistralSmallConversationSummarizer implements ConversationSummarizerPort {
  constructor(
    private readonly model: LanguageModelV3,
    private readonly logger: Pick<Logger, 'warn'>,
    private readonly attemptTimeoutMs = 4000,
  ) {}

  async summarize({ transcript, replyText }: Exchange, session: readonly Exchange[] = []): Promise<string | null> {
    try {
      const object = await generateWithDefences(this.model, { schema: SummarySchema, system: SYSTEM, prompt: exchangePrompt({ transcript, replyText }) }, this.attemptTimeoutMs);
      const summary = object.summary?.trim();
      if (!summary) return null;
      const inputs = [transcript, replyText, ...session.flatMap((e) => [e.transcript, e.replyText])];
      if (echoesTranscriptVerbatim(summary, inputs)) {
        this.logger.warn('summary dropped: it re-included the exchange verbatim');
        return null;
      }
      return summary;
    } catch (err) {
      this.logger.warn({ err }, 'summary skipped: the summarizer failed');
      return null;
    }
  }
}
