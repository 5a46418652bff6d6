import type { SeniorProfile } from '../../machines/session/ports.ts';
import { hashToken } from './tokens.ts';
import type { Queryable } from './transaction.ts';

export type ApiRole = 'admin' | 'operator' | 'caregiver';

/** A caregiver as the back office lists it: its token row, whether that token works, and the seniors it reads. */
export interface CaregiverRecord {
  id: string;
  label: string;
  createdAt: string;
  tokenActive: boolean;
  seniorIds: string[];
}

/** Reads and writes the identity tables: seniors, kiosk devices, API tokens. */
export class SeniorDirectory {
  private readonly pool: Queryable;

  constructor(pool: Queryable) {
    this.pool = pool;
  }

  async seniorForKioskToken(token: string): Promise<string | null> {
    const res = await this.pool.query<{ senior_id: string }>('SELECT senior_id FROM devices WHERE token_hash = $1', [hashToken(token)]);
    return res.rows[0]?.senior_id ?? null;
  }

  /** Null for a revoked token too: revocation clears the row's hash, so no token matches it any more. */
  async roleForApiToken(token: string): Promise<{ id: string; role: ApiRole } | null> {
    const res = await this.pool.query<{ id: string; role: ApiRole }>('SELECT id, role FROM api_tokens WHERE token_hash = $1', [hashToken(token)]);
    return res.rows[0] ?? null;
  }

  async roleOfToken(tokenId: string): Promise<ApiRole | null> {
    const res = await this.pool.query<{ role: ApiRole }>('SELECT role FROM api_tokens WHERE id = $1::uuid', [tokenId]);
    return res.rows[0]?.role ?? null;
  }

  async exists(seniorId: string): Promise<boolean> {
    const res = await this.pool.query('SELECT 1 FROM seniors WHERE id = $1::uuid', [seniorId]);
    return (res.rowCount ?? 0) > 0;
  }

  async profile(seniorId: string): Promise<SeniorProfile | null> {
    const res = await this.pool.query<{ preferred_name: string | null; onboarding_done: boolean }>(
      'SELECT preferred_name, onboarding_done FROM seniors WHERE id = $1',
      [seniorId],
    );
    const row = res.rows[0];
    return row ? { preferredName: row.preferred_name, isFreshSenior: !row.onboarding_done } : null;
  }

  /** The names seniors were registered under (`senior:create --name`), by id: what the operator console shows. */
  async displayNames(seniorIds: string[]): Promise<Map<string, string>> {
    if (seniorIds.length === 0) return new Map();
    const res = await this.pool.query<{ id: string; display_name: string }>('SELECT id, display_name FROM seniors WHERE id = ANY($1::uuid[])', [seniorIds]);
    return new Map(res.rows.map((r) => [r.id, r.display_name]));
  }

  async createSenior(input: { displayName: string; preferredName?: string; onboardingDone?: boolean }): Promise<string> {
    const res = await this.pool.query<{ id: string }>(
      'INSERT INTO seniors (display_name, preferred_name, onboarding_done) VALUES ($1, $2, $3) RETURNING id',
      [input.displayName, input.preferredName ?? null, input.onboardingDone ?? false],
    );
    return res.rows[0]!.id;
  }

  async addDevice(seniorId: string, token: string, label = 'kiosk'): Promise<void> {
    await this.pool.query('INSERT INTO devices (senior_id, token_hash, label) VALUES ($1, $2, $3)', [seniorId, hashToken(token), label]);
  }

  async addApiToken(role: ApiRole, token: string, label: string): Promise<string> {
    const res = await this.pool.query<{ id: string }>('INSERT INTO api_tokens (role, token_hash, label) VALUES ($1, $2, $3) RETURNING id', [
      role,
      hashToken(token),
      label,
    ]);
    return res.rows[0]!.id;
  }

  /**
   * A new token for an API token row of that role (rotation, or a token again after a revocation): the
   * previous one stops matching at once, and the row's id — its links — stays. False: no such row.
   */
  async replaceApiToken(id: string, role: ApiRole, token: string): Promise<boolean> {
    const res = await this.pool.query('UPDATE api_tokens SET token_hash = $3, revoked_at = NULL WHERE id = $1::uuid AND role = $2', [id, role, hashToken(token)]);
    return (res.rowCount ?? 0) > 0;
  }

  /**
   * Revokes the token of an API token row (of `role`, when given): the row and a caregiver's links stay,
   * so `replaceApiToken` can issue a new one later. Revoking a revoked token keeps its first revocation
   * time. False: no such row.
   */
  async revokeApiToken(id: string, role?: ApiRole): Promise<boolean> {
    const res = await this.pool.query(
      'UPDATE api_tokens SET token_hash = NULL, revoked_at = coalesce(revoked_at, now()) WHERE id = $1::uuid AND ($2::text IS NULL OR role = $2)',
      [id, role ?? null],
    );
    return (res.rowCount ?? 0) > 0;
  }

  /** Every caregiver token row, oldest first, with the seniors linked to it. */
  async caregivers(): Promise<CaregiverRecord[]> {
    const res = await this.pool.query<{ id: string; label: string; created_at: Date; token_active: boolean; senior_ids: string[] }>(
      `SELECT t.id, t.label, t.created_at, t.token_hash IS NOT NULL AS token_active,
              coalesce(array_agg(cs.senior_id ORDER BY cs.senior_id) FILTER (WHERE cs.senior_id IS NOT NULL), '{}') AS senior_ids
         FROM api_tokens t LEFT JOIN caregiver_seniors cs ON cs.caregiver_id = t.id
        WHERE t.role = 'caregiver'
        GROUP BY t.id
        ORDER BY t.created_at, t.id`,
    );
    return res.rows.map((r) => ({ id: r.id, label: r.label, createdAt: r.created_at.toISOString(), tokenActive: r.token_active, seniorIds: r.senior_ids }));
  }

  /**
   * A caregiver token reads only the seniors linked to it (INV-P05). Linking twice is linking once.
   * Says which of the two exists: the link is made only when both do.
   */
  async linkCaregiver(caregiverId: string, seniorId: string): Promise<{ caregiver: boolean; senior: boolean }> {
    const res = await this.pool.query<{ caregiver: boolean; senior: boolean }>(
      `WITH c AS (SELECT id FROM api_tokens WHERE id = $1::uuid AND role = 'caregiver'),
            s AS (SELECT id FROM seniors WHERE id = $2::uuid),
            linked AS (INSERT INTO caregiver_seniors (caregiver_id, senior_id) SELECT c.id, s.id FROM c, s ON CONFLICT DO NOTHING)
       SELECT EXISTS (SELECT 1 FROM c) AS caregiver, EXISTS (SELECT 1 FROM s) AS senior`,
      [caregiverId, seniorId],
    );
    return res.rows[0]!;
  }

  /** False when that caregiver was not linked to that senior. */
  async unlinkCaregiver(caregiverId: string, seniorId: string): Promise<boolean> {
    const res = await this.pool.query('DELETE FROM caregiver_seniors WHERE caregiver_id = $1::uuid AND senior_id = $2::uuid', [caregiverId, seniorId]);
    return (res.rowCount ?? 0) > 0;
  }

  async isLinked(caregiverId: string, seniorId: string): Promise<boolean> {
    const res = await this.pool.query('SELECT 1 FROM caregiver_seniors WHERE caregiver_id = $1::uuid AND senior_id = $2::uuid', [caregiverId, seniorId]);
    return (res.rowCount ?? 0) > 0;
  }

  /** The seniors linked to a caregiver token, by the name the companion uses (else the registered one), alphabetically. */
  async linkedSeniors(caregiverId: string): Promise<Array<{ id: string; name: string }>> {
    const res = await this.pool.query<{ id: string; name: string }>(
      `SELECT s.id, coalesce(s.preferred_name, s.display_name) AS name
         FROM caregiver_seniors cs JOIN seniors s ON s.id = cs.senior_id
        WHERE cs.caregiver_id = $1::uuid ORDER BY name, s.id`,
      [caregiverId],
    );
    return res.rows;
  }

  async isEmpty(): Promise<boolean> {
    const res = await this.pool.query<{ n: string }>('SELECT (SELECT count(*) FROM seniors) + (SELECT count(*) FROM api_tokens) AS n');
    return Number(res.rows[0]!.n) === 0;
  }
}
