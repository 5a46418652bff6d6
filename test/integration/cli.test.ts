import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { CliError, runCommand } from '../../runtime/cli.ts';
import { migratedDatabase } from '../support/database.ts';

let db: Awaited<ReturnType<typeof migratedDatabase>>;
beforeAll(async () => {
  db = await migratedDatabase();
});
afterAll(() => db.close());

const value = (lines: string[], prefix: string) => lines.find((l) => l.startsWith(prefix))!.slice(prefix.length);

describe('npm run cli', () => {
  it('creates a senior, a kiosk, a caregiver token, and links them', async () => {
    const senior = value(await runCommand(db.directory, ['senior:create', '--name', 'Jeanne Martin', '--preferred', 'Jeanne', '--onboarded']), 'senior: ');
    expect(await db.directory.profile(senior)).toEqual({ preferredName: 'Jeanne', isFreshSenior: false });
    const kiosk = value(await runCommand(db.directory, ['device:create', '--senior', senior]), 'kiosk token: ');
    expect(await db.directory.seniorForKioskToken(kiosk)).toBe(senior);
    const lines = await runCommand(db.directory, ['token:create', '--role', 'caregiver', '--label', 'Claire (fille)']);
    const id = value(lines, 'caregiver token id: ');
    expect(await db.directory.roleForApiToken(value(lines, 'caregiver token: '))).toEqual({ id, role: 'caregiver' });
    await runCommand(db.directory, ['caregiver:link', '--caregiver', id, '--senior', senior]);
    expect(await db.directory.isLinked(id, senior)).toBe(true);
  });

  it.each([
    [['senior:create'], '--name is required'],
    [['token:create', '--role', 'superuser', '--label', 'x'], '--role must be'],
    [['caregiver:link', '--caregiver', 'nope', '--senior', 'x'], '--caregiver must be a UUID'],
    [['device:create', '--senior', '00000000-0000-4000-8000-000000000000'], 'no senior'],
    [['frobnicate'], 'unknown command frobnicate'],
  ])('%j → a clear error', async (argv, message) => {
    await expect(runCommand(db.directory, argv)).rejects.toThrow(CliError);
    await expect(runCommand(db.directory, argv)).rejects.toThrow(message);
  });

  it('refuses to link a token that is not a caregiver’s', async () => {
    const senior = value(await runCommand(db.directory, ['senior:create', '--name', 'Paul']), 'senior: ');
    const id = value(await runCommand(db.directory, ['token:create', '--role', 'operator', '--label', 'ops']), 'operator token id: ');
    await expect(runCommand(db.directory, ['caregiver:link', '--caregiver', id, '--senior', senior])).rejects.toThrow('not a caregiver token');
  });
});
