import type pg from 'pg';
import { SeniorDirectory } from '../../adapters/postgres/senior-directory.ts';
import { grantConsent } from '../../adapters/postgres/pg-consent.adapter.ts';
import { generateToken } from '../../adapters/postgres/tokens.ts';
import { inTransaction } from '../../adapters/postgres/transaction.ts';
import { CONSENT_CATEGORIES } from '../../machines/memory/memory.port.ts';
import { ForeignTokensFile, readDevTokens, saveDevTokens, type DevTokens } from './dev-tokens-file.ts';

export interface DevSeed extends DevTokens {
  /** True when a token was generated here (it is printed once, never stored in clear). */
  generated: boolean;
}

/** Taken by every start that may seed: the check for an empty database and the seed are one step across processes. */
const SEED_LOCK_SQL = `SELECT pg_advisory_xact_lock(hashtextextended('kohami.dev-seed', 0))`;

/**
 * Outside production, an empty database gets a demo senior « Marie » (onboarding done,
 * so CacheFlux greets her as someone it knows, every consent granted) with a kiosk token
 * and an admin token. One transaction under a lock: processes started at once on one empty
 * database seed one Marie between them, and a start that dies half-way seeds nothing.
 */
export async function seedDevData(pool: pg.Pool, tokens: { kioskToken?: string | undefined; adminToken?: string | undefined }): Promise<DevSeed | null> {
  return inTransaction(pool, async (client) => {
    await client.query(SEED_LOCK_SQL);
    const directory = new SeniorDirectory(client);
    if (!(await directory.isEmpty())) return null;
    const kioskToken = tokens.kioskToken ?? generateToken('kiosk');
    const adminToken = tokens.adminToken ?? generateToken('admin');
    const seniorId = await directory.createSenior({ displayName: 'Marie Dupont', preferredName: 'Marie', onboardingDone: true });
    await directory.addDevice(seniorId, kioskToken, 'demo kiosk');
    await directory.addApiToken('admin', adminToken, 'demo admin');
    // Marie has agreed to everything, so the demo shows recall; revoke through the admin API to see the gates.
    for (const category of CONSENT_CATEGORIES) await grantConsent(client, seniorId, category);
    return { seniorId, kioskToken, adminToken, generated: !tokens.kioskToken || !tokens.adminToken };
  });
}

/**
 * The demo tokens a restart prints, from `file`, checked against the database first: when it no longer
 * knows them (a restored database, tokens revoked through the admin API) the demo senior gets fresh ones,
 * kept in their place. Null when there is nothing to print: no file, a file not ours (`warn` says why and
 * where, never a token), or a demo senior the database does not know.
 */
export async function keptDemoTokens(file: string, directory: SeniorDirectory, warn: (message: string) => void): Promise<DevTokens | null> {
  try {
    const kept = await readDevTokens(file);
    if (!kept) return null;
    const known = (await directory.seniorForKioskToken(kept.kioskToken)) === kept.seniorId && (await directory.roleForApiToken(kept.adminToken))?.role === 'admin';
    if (known) return kept;
    if (!(await directory.exists(kept.seniorId))) return null;
    const fresh = { seniorId: kept.seniorId, kioskToken: generateToken('kiosk'), adminToken: generateToken('admin') };
    await directory.addDevice(fresh.seniorId, fresh.kioskToken, 'demo kiosk');
    await directory.addApiToken('admin', fresh.adminToken, 'demo admin');
    await saveDevTokens(file, fresh);
    return fresh;
  } catch (err) {
    if (!(err instanceof ForeignTokensFile)) throw err;
    warn(err.message);
    return null;
  }
}
