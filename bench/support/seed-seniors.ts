import { CONSENT_CATEGORIES } from '../../machines/memory/memory.port.ts';
import type { Runtime } from '../../runtime/runtime.ts';

/**
 * One senior per bench kiosk (one live session per senior), token `<tokenPrefix><i>`, i from 1 to n,
 * preferred name « Marie », or `<namePrefix><i>` when each senior must be told apart by name.
 */
export async function seedBenchSeniors(rt: Pick<Runtime, 'db'>, n: number, opts: { tokenPrefix?: string; namePrefix?: string } = {}): Promise<void> {
  await rt.db.pool.query(
    `WITH s AS (INSERT INTO seniors (display_name, preferred_name, onboarding_done)
                SELECT 'bench-' || i, COALESCE($3::text || i, 'Marie'), true FROM generate_series(1, $1::int) i RETURNING id, display_name)
     INSERT INTO devices (senior_id, token_hash)
     SELECT id, encode(sha256(convert_to($2::text || substr(display_name, 7), 'UTF8')), 'hex') FROM s`,
    [n, opts.tokenPrefix ?? 'kiosk_bench_', opts.namePrefix ?? null],
  );
}

/**
 * Every consent for every senior, in one statement (10,000 seniors one grant at a time take minutes):
 * turns then reach recall and the agent, not the neutral line.
 */
export async function grantAllConsents(rt: Pick<Runtime, 'db'>): Promise<void> {
  await rt.db.pool.query(
    `INSERT INTO consents (senior_id, category) SELECT s.id, c FROM seniors s, unnest($1::text[]) c ON CONFLICT (senior_id, category) DO NOTHING`,
    [[...CONSENT_CATEGORIES]],
  );
}
