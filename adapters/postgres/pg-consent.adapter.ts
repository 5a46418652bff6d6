import type pg from 'pg';
import type { ConsentCategory, ConsentPort } from '../../machines/memory/memory.port.ts';
import type { Queryable } from './transaction.ts';

export interface ConsentRecord {
  category: ConsentCategory;
  active: boolean;
  grantedAt: string;
  revokedAt: string | null;
}

interface ConsentRow {
  category: ConsentCategory;
  granted_at: Date;
  revoked_at: Date | null;
}

const toRecord = (row: ConsentRow): ConsentRecord => ({
  category: row.category,
  active: row.revoked_at === null,
  grantedAt: row.granted_at.toISOString(),
  revokedAt: row.revoked_at?.toISOString() ?? null,
});

const HAS_CONSENT = 'SELECT 1 FROM consents WHERE senior_id = $1::uuid AND category = $2 AND revoked_at IS NULL';

/** Grants `category` (again, after a revocation: a new grant time; an active grant keeps its own). */
export async function grantConsent(db: Queryable, seniorId: string, category: ConsentCategory): Promise<ConsentRecord> {
  const res = await db.query<ConsentRow>(
    `INSERT INTO consents (senior_id, category) VALUES ($1::uuid, $2)
     ON CONFLICT (senior_id, category) DO UPDATE
       SET granted_at = CASE WHEN consents.revoked_at IS NULL THEN consents.granted_at ELSE now() END, revoked_at = NULL
     RETURNING category, granted_at, revoked_at`,
    [seniorId, category],
  );
  return toRecord(res.rows[0]!);
}

/** Consents per senior and category (INV-C01). A revocation keeps the row, and the facts. */
export class PgConsentAdapter implements ConsentPort {
  private readonly pool: pg.Pool;

  constructor(pool: pg.Pool) {
    this.pool = pool;
  }

  async hasConsent(seniorId: string, category: ConsentCategory, signal?: AbortSignal): Promise<boolean> {
    signal?.throwIfAborted();
    // A turn's query can wait for a connection behind many others; by then the turn may be over.
    const client = await this.pool.connect();
    try {
      signal?.throwIfAborted();
      const res = await client.query(HAS_CONSENT, [seniorId, category]);
      return (res.rowCount ?? 0) > 0;
    } finally {
      client.release();
    }
  }

  async activeCategories(seniorId: string): Promise<Set<ConsentCategory>> {
    const res = await this.pool.query<{ category: ConsentCategory }>('SELECT category FROM consents WHERE senior_id = $1::uuid AND revoked_at IS NULL', [seniorId]);
    return new Set(res.rows.map((r) => r.category));
  }

  grant(seniorId: string, category: ConsentCategory): Promise<ConsentRecord> {
    return grantConsent(this.pool, seniorId, category);
  }

  /** Null when the category was never granted. Revoking twice keeps the first revocation time. */
  async revoke(seniorId: string, category: ConsentCategory): Promise<ConsentRecord | null> {
    const res = await this.pool.query<ConsentRow>(
      `UPDATE consents SET revoked_at = COALESCE(revoked_at, now()) WHERE senior_id = $1::uuid AND category = $2
       RETURNING category, granted_at, revoked_at`,
      [seniorId, category],
    );
    return res.rows[0] ? toRecord(res.rows[0]) : null;
  }

  async list(seniorId: string): Promise<ConsentRecord[]> {
    const res = await this.pool.query<ConsentRow>('SELECT category, granted_at, revoked_at FROM consents WHERE senior_id = $1::uuid ORDER BY category', [seniorId]);
    return res.rows.map(toRecord);
  }
}
