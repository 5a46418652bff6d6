import type { AgentRequest, CompassView, InterlocutorView } from './ports.ts';

export const DEFAULT_PERSONA = [
  'Tu es Kohami, un compagnon de conversation bienveillant pour une personne âgée.',
  'Tu parles toujours en français, avec des phrases courtes, simples et chaleureuses, faites pour être dites à voix haute.',
  'Tu vouvoies ton interlocuteur, tu écoutes, tu poses au plus une question à la fois.',
  "Tu ne donnes jamais de diagnostic ni de conseil médical : en cas d'inquiétude, tu proposes de prévenir un proche ou un soignant.",
].join(' ');

/** Changes whenever the persona or the prompt's shape changes: cached replies of another version are never served. */
export const promptVersion = (persona: string | null | undefined) => `v2-${fnv1a(persona ?? DEFAULT_PERSONA)}`;

function fnv1a(text: string): string {
  let hash = 0x811c9dc5;
  for (let i = 0; i < text.length; i++) hash = Math.imul(hash ^ text.charCodeAt(i), 0x01000193);
  return (hash >>> 0).toString(16);
}

export interface AgentPrompt {
  system: string;
  messages: Array<{ role: 'user' | 'assistant'; content: string }>;
}

const list = (items: readonly string[] | undefined) => (items && items.length > 0 ? items.join(' ; ') : null);

function compassSection(c: CompassView | null | undefined): string | null {
  if (!c) return null;
  const lines = [
    c.resumeWith && `reprendre par : ${c.resumeWith}`,
    list(c.questionsToAsk) && `questions possibles : ${list(c.questionsToAsk)}`,
    list(c.avoid) && `à éviter : ${list(c.avoid)}`,
    c.tone && `ton : ${c.tone}`,
    list(c.topicsToExplore) && `sujets à creuser : ${list(c.topicsToExplore)}`,
    list(c.uncertainties) && `incertitudes : ${list(c.uncertainties)}`,
  ].filter(Boolean);
  return lines.length > 0 ? `Préparation de cette séance (à suivre avec tact, seulement si la conversation s'y prête) :\n- ${lines.join('\n- ')}` : null;
}

function interlocutorSection(p: InterlocutorView | null | undefined): string | null {
  if (!p) return null;
  const lines = [
    p.role && `rôle : ${p.role}`,
    list(p.interests) && `centres d'intérêt : ${list(p.interests)}`,
    list(p.recurringTopics) && `sujets récurrents : ${list(p.recurringTopics)}`,
    list(p.patterns) && `habitudes : ${list(p.patterns)}`,
  ].filter(Boolean);
  return lines.length > 0 ? `Ce que vous savez de la personne (arrière-plan) :\n- ${lines.join('\n- ')}` : null;
}

/**
 * The agent's context, in this order: persona → compass → interlocutor profile → the 3 most
 * recent segments → recalled facts → the window's running summary → the window (the current
 * request last). Past memories are marked as quiet background: the persona and the current
 * request lead.
 */
export function buildAgentPrompt(request: AgentRequest): AgentPrompt {
  const parts = [request.profile.persona ?? DEFAULT_PERSONA];
  if (request.profile.preferredName) parts.push(`La personne souhaite qu'on l'appelle ${request.profile.preferredName}.`);
  for (const section of [compassSection(request.profile.compass), interlocutorSection(request.profile.interlocutor)]) if (section) parts.push(section);
  const segments = request.profile.recentSegments ?? [];
  if (segments.length > 0) {
    parts.push(
      "Vos dernières conversations (arrière-plan discret : n'y revenez pas de vous-même, la demande actuelle passe d'abord) :\n" +
        [...segments].reverse().map((s) => `- ${s.endedAt.slice(0, 10)} : ${s.summary}`).join('\n'),
    );
  }
  if (request.facts.length > 0) {
    parts.push(
      'Ce que tu sais déjà (arrière-plan discret : ne le mentionne que si la demande actuelle s\'y prête) :\n' +
        request.facts.map((f) => `- ${f.content}`).join('\n'),
    );
  }
  if (request.runningSummary) parts.push(`Plus tôt dans cette conversation : ${request.runningSummary}`);
  return {
    system: parts.join('\n\n'),
    messages: request.window.map((m) => ({
      role: m.role,
      content: m.interrupted ? `${m.content} […interrompu]` : m.content,
    })),
  };
}
