import type { LanguageModelV4 } from '@ai-sdk/provider';
import { z } from 'zod';
import type { Exchange, MoodClassifierPort } from '../../machines/memory/derivation.ts';
import { exchangesPrompt, generateWithDefences } from './llm-defences.ts';

const MoodSchema = z.object({ score: z.number().int().min(0).max(100) });

const SYSTEM = [
  "Tu évalues l'humeur d'une personne âgée d'après un échange avec son compagnon de conversation.",
  'Réponds par un score entier de 0 à 100 : 0 = très préoccupante (détresse, douleur, peur), 50 = neutre, 100 = très enjouée.',
  "Tu n'interprètes rien médicalement ; tu ne juges que le ton de ce que la personne a dit.",
].join(' ');

/** The per-turn mood classifier on Mistral Small (seed ADR: Small for every sub-agent). */
export class MistralSmallMoodClassifier implements MoodClassifierPort {
  private readonly model: LanguageModelV4;
  private readonly attemptTimeoutMs: number;

  constructor(
    model: LanguageModelV4,
    attemptTimeoutMs = 4000,
  ) {
    this.model = model;
    this.attemptTimeoutMs = attemptTimeoutMs;
  }

  async classify(exchange: Exchange): Promise<number> {
    const { score } = await generateWithDefences(this.model, { schema: MoodSchema, system: SYSTEM, prompt: exchangesPrompt([exchange]) }, this.attemptTimeoutMs);
    return score;
  }
}
