import type { LanguageModelV4 } from '@ai-sdk/provider';
import { z } from 'zod';
import { verbatimGuard } from '../../machines/memory/derivation.ts';
import { FACT_CATEGORIES } from '../../machines/memory/memory.port.ts';
import { generateWithDefences, reformulationRules } from './llm-defences.ts';

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
  "Aucun diagnostic médical. Un motif n'est proposé que s'il revient vraiment.",
  reformulationRules('des notes, des séances ou des faits'),
].join(' ');

/**
 * The nightly consolidation's proposal, on Mistral Small (structured JSON output). Its inputs are
 * derived texts, but older ones (or a model's slip) may still carry the senior's words: every
 * proposed text the verbatim guard refuses against the notes, segments and facts it read is
 * dropped alone (a list item removed, a single value set to null), the rest kept.
 */
export class MistralSmallConsolidator {
  private readonly model: LanguageModelV4;
  private readonly attemptTimeoutMs: number;

  constructor(
    model: LanguageModelV4,
    attemptTimeoutMs = 20_000,
  ) {
    this.model = model;
    this.attemptTimeoutMs = attemptTimeoutMs;
  }

  async propose(inputs: ConsolidationInputs): Promise<Consolidation> {
    const prompt = [
      `Notes des 7 derniers jours :\n${inputs.notes.map((n) => `- ${n}`).join('\n') || '(aucune)'}`,
      `Séances récentes :\n${inputs.segments.map((s) => `- ${s}`).join('\n') || '(aucune)'}`,
      `Faits connus :\n${inputs.facts.map((f) => `- ${f}`).join('\n') || '(aucun)'}`,
      `Profil actuel : ${JSON.stringify(inputs.interlocutor)}`,
      `Boussole actuelle : ${JSON.stringify(inputs.compass)}`,
    ].join('\n\n');
    const proposal = await generateWithDefences(this.model, { schema: ConsolidationSchema, system: SYSTEM, prompt }, this.attemptTimeoutMs);
    return withoutVerbatim(proposal, inputs);
  }
}

function withoutVerbatim(proposal: Consolidation, inputs: ConsolidationInputs): Consolidation {
  const verbatim = verbatimGuard({ utterances: [], texts: [...inputs.notes, ...inputs.segments, ...inputs.facts] });
  const keep = (text: string) => verbatim(text) === null;
  const list = (texts: string[]) => texts.filter(keep);
  const single = (text: string | null) => (text !== null && keep(text) ? text : null);
  const { patterns, hypotheses, continuity, nextSession, compass, interlocutor } = proposal;
  return {
    patterns: patterns.filter((p) => keep(p.pattern)),
    hypotheses: list(hypotheses),
    continuity: list(continuity),
    nextSession: { resumeWith: single(nextSession.resumeWith), questionsToAsk: list(nextSession.questionsToAsk), avoid: list(nextSession.avoid) },
    compass: { uncertainties: list(compass.uncertainties), tone: single(compass.tone), topicsToExplore: list(compass.topicsToExplore) },
    interlocutor: {
      role: single(interlocutor.role),
      interests: list(interlocutor.interests),
      recurringTopics: list(interlocutor.recurringTopics),
      patterns: list(interlocutor.patterns),
    },
  };
}
