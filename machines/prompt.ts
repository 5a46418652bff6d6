import type { AgentRequest } from './ports.ts';

export const DEFAULT_PERSONA = [
  'Tu es Kohami, un compagnon de conversation bienveillant pour une personne âgée.',
  'Tu parles toujours en français, avec des phrases courtes, simples et chaleureuses, faites pour être dites à voix haute.',
  'Tu vouvoies ton interlocuteur, tu écoutes, tu poses au plus une question à la fois.',
  "Tu ne donnes jamais de diagnostic ni de conseil médical : en cas d'inquiétude, tu proposes de prévenir un proche ou un soignant.",
].join(' ');

/** Changes whenever the persona or the prompt's shape changes: cached replies of another version are never served. */
export const PROMPT_VERSION = `v1-${fnv1a(DEFAULT_PERSONA)}`;

function fnv1a(text: string): string {
  let hash = 0x811c9dc5;
  for (let i = 0; i < text.length; i++) hash = Math.imul(hash ^ text.charCodeAt(i), 0x01000193);
  return (hash >>> 0).toString(16);
}

export interface AgentPrompt {
  system: string;
  messages: Array<{ role: 'user' | 'assistant'; content: string }>;
}

/** Persona first, then background knowledge, then the live window (the current request last). */
export function buildAgentPrompt(request: AgentRequest, persona = DEFAULT_PERSONA): AgentPrompt {
  const parts = [persona];
  if (request.profile.preferredName) parts.push(`La personne souhaite qu'on l'appelle ${request.profile.preferredName}.`);
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
