import type { LanguageModelV3 } from '@ai-sdk/provider';
import { z } from 'zod';
import { FACT_CATEGORIES } from '../../machines/memory.port.ts';
import { generateWithDefences } from './llm-defences.ts';

const short = z.string().trim().min(1).max(300);
export const ConsolidationSchema = z.object({
  patterns: z.array(z.object({ pattern: short, category: z.enum(FACT_CATEGORIES) })).max(20),
  hypotheses: z.array(short).max(10),
  continuity: z.array(short).max(10),
  nextSession: z.object({ resumeWith: short.nullable(), questionsToAsk: z.array(short).max(5), avoid: z.array(short).max(5) }),
  compass: z.object({ uncertainties: z.array(short).max(5), tone: short.nullable(), topicsToExplore: z.array(short).max(5) }),
  interlocutor: z.object({ role: short.nullable(), interests: z.array(short).max(10), recurringTopics: z.array(short).max(10), patterns: z.array(short).max(10) }),
});
export type Consolidation = z.infer<typeof ConsolidationSchema>;

export interface ConsolidationInputs {
  notes: string[];
  segments: string[];
  facts: string[];
  interlocutor: unknown;
  compass: unknown;
}

const SYSTEM = [
  "Tu es le « rêve nocturne » d'un compagnon de conversation pour une personne âgée : tu relis la semaine écoulée sans la réinventer.",
  'Propose : les motifs récurrents (faits durables en une phrase à la troisième personne, avec leur catégorie), des hypothèses prudentes,',
  'les points de continuité, la préparation de la prochaine séance (par quoi reprendre, questions à poser, quoi éviter), la boussole',
  "(incertitudes, ton, sujets à creuser) et le profil de l'interlocuteur (rôle, centres d'intérêt, sujets récurrents, habitudes).",
  "Aucun diagnostic médical. Ne recopie aucune phrase des notes : synthétise. Un motif n'est proposé que s'il revient vraiment.",
].join(' ');

/** The nightly consolidation's proposal, on Mistral Small (`generateObject`). */
export class MistralSmallConsolidator {
  constructor(
    private readonly model: LanguageModelV3,
    private readonly attemptTimeoutMs = 20_000,
  ) {}

  propose(inputs: ConsolidationInputs): Promise<Consolidation> {
    const prompt = [
      `Notes des 7 derniers jours :\n${inputs.notes.map((n) => `- ${n}`).join('\n') || '(aucune)'}`,
      `Séances récentes :\n${inputs.segments.map((s) => `- ${s}`).join('\n') || '(aucune)'}`,
      `Faits connus :\n${inputs.facts.map((f) => `- ${f}`).join('\n') || '(aucun)'}`,
      `Profil actuel : ${JSON.stringify(inputs.interlocutor)}`,
      `Boussole actuelle : ${JSON.stringify(inputs.compass)}`,
    ].join('\n\n');
    return generateWithDefences(this.model, { schema: ConsolidationSchema, system: SYSTEM, prompt }, this.attemptTimeoutMs);
  }
}
