/** The six canonical fact categories, aligned with the RGPD consent categories. */
export const FACT_CATEGORIES = ['profil', 'contacts', 'sante', 'localisation', 'vision', 'biometrie'] as const;
export type FactCategory = (typeof FACT_CATEGORIES)[number];

/** Consent categories: the fact categories, plus `conversation` (gates recall, mood and summaries). */
export const CONSENT_CATEGORIES = [...FACT_CATEGORIES, 'conversation'] as const;
export type ConsentCategory = (typeof CONSENT_CATEGORIES)[number];

export const EMBEDDING_DIMENSIONS = 1024;

export function isFactCategory(value: string): value is FactCategory {
  return (FACT_CATEGORIES as readonly string[]).includes(value);
}

export class InvalidFactCategoryError extends Error {
  constructor(category: string) {
    super(`invalid fact category "${category}"; expected one of ${FACT_CATEGORIES.join(', ')}`);
    this.name = 'InvalidFactCategoryError';
  }
}

export interface MemoryFact {
  id: string;
  seniorId: string;
  content: string;
  category: FactCategory;
  /** Computed by the store on persist and returned then; searches do not return it (recall never needs it). */
  embedding?: number[];
}

export type NewMemoryFact = Omit<MemoryFact, 'id' | 'embedding'> & {
  id?: string;
  /** The id of a fact of the same senior this one replaces (an update): it is invalidated, unless it is this very fact. */
  supersedes?: string;
};

/** What `persist` did: stored the fact (`created`), or found it already held (the held fact is returned). */
export type PersistedFact = MemoryFact & { created: boolean };

/**
 * Long-term memory. Every search is scoped to one senior and filtered by active consent (INV-C01, INV-P05),
 * and returns only valid facts: a fact that was superseded or invalidated is kept, never recalled.
 */
export interface MemoryPort {
  /** Stores a fact unless the senior already holds it (the same content, or the same meaning): never a second copy. */
  persist(fact: NewMemoryFact): Promise<PersistedFact>;
  /** Marks one valid fact of the senior as no longer holding (kept, never recalled); false if there was none. */
  invalidate(seniorId: string, factId: string): Promise<boolean>;
  /** `signal` aborts the search's own calls (the embedding, the store's request) when its turn no longer waits. */
  search(query: string, seniorId: string, limit: number, signal?: AbortSignal): Promise<MemoryFact[]>;
  /** Removes every fact of the senior; returns how many were removed. Idempotent. */
  deleteSenior(seniorId: string): Promise<number>;
}

export interface MemoryEmbedderPort {
  /** Identifies the vector space: vectors of two model ids are never compared. */
  readonly modelId: string;
  /** `signal` aborts the request; adapters also bound every call by a timeout of their own. */
  embed(texts: string[], signal?: AbortSignal): Promise<number[][]>;
}

export interface ConsentPort {
  /**
   * `signal`: the turn asking. Once it has ended (SOS, barge-in, close) the answer is not needed: under
   * load its query, still queued for a connection, is then never run.
   */
  hasConsent(seniorId: string, category: ConsentCategory, signal?: AbortSignal): Promise<boolean>;
  /** The categories with an active consent, for stores that cannot join on the consents table. */
  activeCategories(seniorId: string): Promise<Set<ConsentCategory>>;
}

/** An empty or all-zero vector has no direction: cosine distance to it is undefined (NaN). */
export function isDegenerateVector(vector: readonly number[] | null | undefined): boolean {
  if (!vector || vector.length === 0) return true;
  for (const x of vector) if (x !== 0 && Number.isFinite(x)) return false;
  return true;
}
