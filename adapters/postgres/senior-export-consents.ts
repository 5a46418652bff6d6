import { CONSENT_CATEGORIES, type ConsentCategory } from '../../machines/memory/memory.port.ts';

/** A part of the export: a table, or only some of its rows (`where`) or columns. */
export interface ExportPart {
  table: string;
  where?: Record<string, string>;
  columns?: string[];
  note?: string;
}

/** One consent (or none: the service itself) and the parts of the export collected under it. */
export interface ConsentSection {
  consent: ConsentCategory | null;
  /** Whether the senior's consent is granted now (null for the parts held without one). */
  granted: boolean | null;
  grantedAt: string | null;
  revokedAt: string | null;
  /** Why the parts are held when no consent is: the service they make work. */
  basis?: string;
  holds: ExportPart[];
}

/**
 * Under which consent each table's rows were collected. Everything a session derives (mood, summaries,
 * segments, facts, the dream's notes, pause profiles, the caregiver alerts read from the mood scores) is written only under `conversation` (INV-C01:
 * close-jobs.ts, dream.ts, pause-profiles.ts); a fact is also kept only under its own category.
 */
const CONVERSATION: ExportPart[] = [
  { table: 'mood_scores' },
  { table: 'segments' },
  { table: 'consolidation_runs' },
  { table: 'caregiver_alerts', note: 'episodes read from the mood scores: days and numbers only' },
  { table: 'profiles', columns: ['pauses'] },
  { table: 'memory_facts', note: 'facts extracted from sessions; each is also held under its own category below' },
  { table: 'consolidation_candidates', note: 'patterns the nightly consolidation found; each is also held under its own category below' },
];
/** The tables whose rows each carry a fact category: a row is held under its category's consent. */
const CATEGORY_TABLES = ['memory_facts', 'consolidation_candidates'];
const byCategory = (category: string): ExportPart[] => CATEGORY_TABLES.map((table) => ({ table, where: { category } }));
/** Held to run the service, whatever the consents: who the senior is to the kiosks, caregivers and admins. */
const SERVICE: ExportPart[] = [
  { table: 'consents' },
  { table: 'devices' },
  { table: 'caregiver_seniors' },
  { table: 'session_presence' },
  { table: 'personas' },
  { table: 'profiles', columns: ['interlocutor', 'compass'], note: 'set by an admin' },
];
const SERVICE_BASIS = 'the service itself: the senior’s kiosks, caregivers, consents, live session and the persona and profile an admin set';

/**
 * The export's consent sections: one per consent category, granted or not, with the parts held under
 * it, then the parts held without one. A table the lists above do not name is listed there as unlabelled
 * (test/e2e/senior-data-api.test.ts keeps every table named).
 */
export function consentSections(tables: readonly string[], rows: ReadonlyArray<{ category: string; granted_at: Date; revoked_at: Date | null }>): ConsentSection[] {
  const present = (parts: ExportPart[]) => parts.filter((p) => tables.includes(p.table));
  const sections: ConsentSection[] = CONSENT_CATEGORIES.map((consent) => {
    const row = rows.find((r) => r.category === consent);
    return {
      consent,
      granted: row !== undefined && row.revoked_at === null,
      grantedAt: row?.granted_at.toISOString() ?? null,
      revokedAt: row?.revoked_at?.toISOString() ?? null,
      holds: present(consent === 'conversation' ? CONVERSATION : byCategory(consent)),
    };
  });
  const labelled = new Set([...CONVERSATION, ...SERVICE].map((p) => p.table).concat(CATEGORY_TABLES));
  const unlabelled = tables.filter((t) => !labelled.has(t)).map((table) => ({ table, note: 'unlabelled: not yet said under which consent it is collected' }));
  sections.push({ consent: null, granted: null, grantedAt: null, revokedAt: null, basis: SERVICE_BASIS, holds: [...present(SERVICE), ...unlabelled] });
  return sections;
}
