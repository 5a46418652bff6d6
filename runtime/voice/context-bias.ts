import type { PgMemoryFactsRepository } from '../../adapters/postgres/pg-memory-facts.repository.ts';
import { STOP_WORDS } from '../../machines/french/lexicon.ts';
import type { ConsentPort } from '../../machines/memory/memory.port.ts';

const STOP = new Set(STOP_WORDS.split(/\s+/).filter(Boolean));
/** Capitalized words: « Claire », « Jean-Pierre », « Saint-Étienne ». */
const NAME = /\p{Lu}[\p{Ll}'’]+(?:-\p{Lu}[\p{Ll}'’]+)*/gu;
/** Facts read per session start: recent contacts are the names most likely said. */
const CONTACT_FACTS = 50;
const MAX_NAMES = 50;

/** The capitalized words of a fact that are not everyday words (« Sa fille Claire » → Claire). */
export function namesIn(text: string): string[] {
  return (text.match(NAME) ?? []).filter((word) => !STOP.has(word.toLowerCase()));
}

/**
 * Words the recognizer should favour for one senior: their preferred name, and — only while the
 * `contacts` consent holds — the names found in their contact facts. Sent to the speech service,
 * never logged or stored.
 */
export async function contextBiasFor(facts: PgMemoryFactsRepository, consents: ConsentPort, seniorId: string, preferredName: string | null): Promise<string[]> {
  const names = new Set<string>(preferredName ? [preferredName] : []);
  if (await consents.hasConsent(seniorId, 'contacts')) {
    for (const fact of await facts.latest(seniorId, CONTACT_FACTS, 'contacts')) for (const name of namesIn(fact)) names.add(name);
  }
  return [...names].slice(0, MAX_NAMES);
}
