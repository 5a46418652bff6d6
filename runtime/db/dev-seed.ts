import { readFile, writeFile } from 'node:fs/promises';
import path from 'node:path';
import type { SeniorDirectory } from '../../adapters/postgres/senior-directory.ts';
import type { PgConsentAdapter } from '../../adapters/postgres/pg-consent.adapter.ts';
import { generateToken } from '../../adapters/postgres/tokens.ts';
import { CONSENT_CATEGORIES } from '../../machines/memory/memory.port.ts';

export interface DevSeed {
  seniorId: string;
  kioskToken: string;
  adminToken: string;
  /** True when a token was generated here (it is printed once, never stored in clear). */
  generated: boolean;
}

/**
 * Outside production, an empty database gets a demo senior « Marie » (onboarding done,
 * so CacheFlux greets her as someone it knows, every consent granted) with a kiosk token
 * and an admin token.
 */
export async function seedDevData(
  directory: SeniorDirectory,
  consents: PgConsentAdapter,
  tokens: { kioskToken?: string | undefined; adminToken?: string | undefined },
): Promise<DevSeed | null> {
  if (!(await directory.isEmpty())) return null;
  const kioskToken = tokens.kioskToken ?? generateToken('kiosk');
  const adminToken = tokens.adminToken ?? generateToken('admin');
  const seniorId = await directory.createSenior({ displayName: 'Marie Dupont', preferredName: 'Marie', onboardingDone: true });
  await directory.addDevice(seniorId, kioskToken, 'demo kiosk');
  await directory.addApiToken('admin', adminToken, 'demo admin');
  // Marie has agreed to everything, so the demo shows recall; revoke through the admin API to see the gates.
  for (const category of CONSENT_CATEGORIES) await consents.grant(seniorId, category);
  return { seniorId, kioskToken, adminToken, generated: !tokens.kioskToken || !tokens.adminToken };
}

/**
 * Generated demo tokens are kept beside a persistent PGlite directory (development only),
 * so a restart can print them again and `npm run kiosk` finds the kiosk token by itself.
 */
export function devTokensFile(pgliteDataDir: string): string | null {
  return pgliteDataDir.startsWith('memory://') ? null : path.join(path.dirname(path.resolve(pgliteDataDir)), 'dev-tokens.json');
}

/** Where this configuration keeps its demo tokens: nowhere in production or on a PostgreSQL server. */
export function devTokensFileFor(config: { KOHAMI_ENV: string; DATABASE_URL?: string | undefined; PGLITE_DATA_DIR: string }): string | null {
  return config.KOHAMI_ENV === 'production' || config.DATABASE_URL ? null : devTokensFile(config.PGLITE_DATA_DIR);
}

export async function saveDevTokens(file: string, seed: DevSeed): Promise<void> {
  await writeFile(file, JSON.stringify({ seniorId: seed.seniorId, kioskToken: seed.kioskToken, adminToken: seed.adminToken }), { mode: 0o600 });
}

export async function readDevTokens(file: string): Promise<Omit<DevSeed, 'generated'> | null> {
  try {
    return JSON.parse(await readFile(file, 'utf8')) as Omit<DevSeed, 'generated'>;
  } catch {
    return null;
  }
}
