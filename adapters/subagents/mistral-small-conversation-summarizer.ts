import type { LanguageModelV4 } from '@ai-sdk/provider';
import type { Logger } from 'pino';
import { z } from 'zod';
import { verbatimSourcesOf, type ConversationSummarizerPort, type Exchange } from '../../machines/memory/derivation.ts';
import { bestEffortSummary, exchangesPrompt, reformulationRules } from './llm-defences.ts';

const SummarySchema = z.object({ summary: z.string().max(1000).nullable() });

const SYSTEM = [
  "Tu résumes un échange entre une personne âgée et son compagnon de conversation, pour le tableau de bord d'un aidant.",
  'Écris 2 à 3 phrases en français, à la troisième personne (« Le senior a évoqué… »), sur un ton factuel et neutre.',
  'Aucun diagnostic, aucune interprétation médicale.',
  reformulationRules("de l'échange"),
  "S'il n'y a rien à résumer, renvoie null.",
].join(' ');

/**
 * The per-turn summary (seed: MistralSmallConversationSummarizer). Best-effort: a timeout,
 * a transport or schema failure, an empty output, or an output the verbatim guard refuses
 * against any exchange of the session all give null, and the mood row is written anyway.
 */
export class MistralSmallConversationSummarizer implements ConversationSummarizerPort {
  private readonly model: LanguageModelV4;
  private readonly logger: Pick<Logger, 'warn'>;
  private readonly attemptTimeoutMs: number;

  constructor(
    model: LanguageModelV4,
    logger: Pick<Logger, 'warn'>,
    attemptTimeoutMs = 4000,
  ) {
    this.model = model;
    this.logger = logger;
    this.attemptTimeoutMs = attemptTimeoutMs;
  }

  summarize(exchange: Exchange, session: readonly Exchange[] = []): Promise<string | null> {
    const request = { schema: SummarySchema, system: SYSTEM, prompt: exchangesPrompt([exchange]) };
    return bestEffortSummary(this.model, request, verbatimSourcesOf([exchange, ...session]), this.logger, this.attemptTimeoutMs);
  }
}
