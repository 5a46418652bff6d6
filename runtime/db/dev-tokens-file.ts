import { randomBytes } from 'node:crypto';
import { constants } from 'node:fs';
import { lstat, open, rename, rm } from 'node:fs/promises';
import path from 'node:path';

/** The demo tokens as kept on disk: printed again by a restart, read by `npm run kiosk`. */
export interface DevTokens {
  seniorId: string;
  kioskToken: string;
  adminToken: string;
}

/** A tokens file this runtime will neither read nor write: someone else's, or readable by others. */
export class ForeignTokensFile extends Error {}

/**
 * Inside a persistent PGlite directory (development only): the runtime's own directory, so two runtimes
 * with data directories under one parent keep apart, and nobody else's file sits at that name by chance.
 */
export function devTokensFile(pgliteDataDir: string): string | null {
  return pgliteDataDir.startsWith('memory://') ? null : path.join(path.resolve(pgliteDataDir), 'dev-tokens.json');
}

/** Where this configuration keeps its demo tokens: nowhere in production or on a PostgreSQL server. */
export function devTokensFileFor(config: { KOHAMI_ENV: string; DATABASE_URL?: string | undefined; PGLITE_DATA_DIR: string }): string | null {
  return config.KOHAMI_ENV === 'production' || config.DATABASE_URL ? null : devTokensFile(config.PGLITE_DATA_DIR);
}

/** Throws ForeignTokensFile unless `file` is absent or ours: a regular file (no symlink), our user's, mode 0600. */
async function assertOurs(file: string): Promise<'absent' | 'ours'> {
  const stats = await lstat(file).catch((err: NodeJS.ErrnoException) => {
    if (err.code === 'ENOENT') return null;
    throw err;
  });
  if (!stats) return 'absent';
  const why = stats.isSymbolicLink()
    ? 'a symbolic link'
    : !stats.isFile()
      ? 'not a regular file'
      : stats.uid !== process.getuid?.()
        ? `owned by uid ${stats.uid}`
        : (stats.mode & 0o777) !== 0o600
          ? `mode ${(stats.mode & 0o777).toString(8)}, not 600`
          : null;
  if (why) throw new ForeignTokensFile(`${file} is not this runtime's (${why}): the demo tokens are neither read from it nor written into it — remove it`);
  return 'ours';
}

/**
 * Writes the tokens to a fresh file of a random name created exclusively (mode 0600, never someone else's),
 * then renames it into place: a file at `file` that is not ours is refused (ForeignTokensFile), never written into.
 */
export async function saveDevTokens(file: string, tokens: DevTokens): Promise<void> {
  await assertOurs(file);
  const fresh = `${file}.${randomBytes(8).toString('hex')}`;
  const handle = await open(fresh, 'wx', 0o600);
  try {
    await handle.writeFile(JSON.stringify({ seniorId: tokens.seniorId, kioskToken: tokens.kioskToken, adminToken: tokens.adminToken }));
    await handle.sync();
  } catch (err) {
    await handle.close();
    await rm(fresh, { force: true });
    throw err;
  }
  await handle.close();
  await rename(fresh, file);
}

/** The tokens in `file` when it is ours (ForeignTokensFile otherwise); null when absent or unreadable. */
export async function readDevTokens(file: string): Promise<DevTokens | null> {
  if ((await assertOurs(file)) === 'absent') return null;
  try {
    // O_NOFOLLOW: a symlink swapped in since the check is not followed.
    const handle = await open(file, constants.O_RDONLY | constants.O_NOFOLLOW);
    try {
      return JSON.parse(await handle.readFile('utf8')) as DevTokens;
    } finally {
      await handle.close();
    }
  } catch {
    return null;
  }
}
