import type { LanguageModelV4 } from '@ai-sdk/provider';
import { z } from 'zod';
import { echoesTranscriptVerbatim } from '../../machines/memory/derivation.ts';
import type { ChatMessage, WindowSummarizerPort } from '../../machines/session/ports.ts';
import { generateWithDefences, reformulationRules } from './llm-defences.ts';

const RunningSummarySchema = z.object({ summary: z.string().max(2000).nullable() });

const SYSTEM = [
  "Tu tiens le fil d'une conversation en cours entre une personne âgée et son compagnon.",
  'On te donne le résumé déjà établi (peut-être vide) et les plus anciens messages de la conversation :',
  "écris le nouveau résumé, 3 à 6 phrases en français, qui intègre l'ancien et ces messages — sujets, personnes, ce qui a été promis ou demandé.",
  reformulationRules('des messages'),
].join(' ');

/**
 * Tier 1: folds the oldest half of the live window into the running summary (Mistral Small).
 * The summary lives in the actor's memory only; it is never persisted. A new summary the
 * verbatim guard refuses (checked against the folded messages) is treated like an empty one:
 * the previous summary stays, as when the call fails.
 */
export class MistralSmallWindowSummarizer implements WindowSummarizerPort {
  private readonly model: LanguageModelV4;
  private readonly attemptTimeoutMs: number;

  constructor(
    model: LanguageModelV4,
    attemptTimeoutMs = 5000,
  ) {
    this.model = model;
    this.attemptTimeoutMs = attemptTimeoutMs;
  }

  async summarize({ previousSummary, messages }: { previousSummary: string | null; messages: ChatMessage[] }): Promise<string | null> {
    const prompt = [
      `Résumé établi : ${previousSummary ?? '(aucun)'}`,
      ...messages.map((m) => `${m.role === 'user' ? 'Personne' : 'Compagnon'} : ${m.content}`),
    ].join('\n');
    const summary = (await generateWithDefences(this.model, { schema: RunningSummarySchema, system: SYSTEM, prompt }, this.attemptTimeoutMs)).summary?.trim();
    const verbatim = {
      utterances: messages.filter((m) => m.role === 'user').map((m) => m.content),
      texts: messages.filter((m) => m.role !== 'user').map((m) => m.content),
    };
    return summary && !echoesTranscriptVerbatim(summary, verbatim) ? summary : previousSummary;
  }
}
