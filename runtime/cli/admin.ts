import { parseArgs } from 'node:util';
import { SeniorDirectory, type ApiRole } from '../../adapters/postgres/senior-directory.ts';
import { generateToken } from '../../adapters/postgres/tokens.ts';
import { ConfigError, loadConfig } from '../config.ts';
import { openCommandDatabase } from '../db/database.ts';
import { exitOnHelp } from './usage.ts';

const USAGE = `usage: npm run cli -- <command> [options]

  senior:create     --name "Jeanne Martin" [--preferred Jeanne] [--onboarded]   prints the senior id
  device:create     --senior ID [--label salon]                                 prints a new kiosk token
  token:create      --role admin|operator|caregiver --label "Claire (fille)"    prints the token id and the token
  token:revoke      --id TOKEN_ID                                               that token stops working at once
  caregiver:link    --caregiver TOKEN_ID --senior ID                            lets that caregiver read the senior
  caregiver:unlink  --caregiver TOKEN_ID --senior ID                            stops it

Tokens are printed once and stored hashed. With embedded PGlite and the runtime up on the same
PGLITE_DATA_DIR, the command goes through the runtime's database.`;

export class CliError extends Error {}

function required(values: Record<string, unknown>, name: string): string {
  const v = values[name];
  if (typeof v !== 'string' || v.trim() === '') throw new CliError(`--${name} is required`);
  return v;
}

/** Runs one command against the directory; returns the lines to print. */
export async function runCommand(directory: SeniorDirectory, argv: string[]): Promise<string[]> {
  const [command, ...rest] = argv;
  const { values } = parseArgs({
    args: rest,
    options: {
      name: { type: 'string' },
      preferred: { type: 'string' },
      onboarded: { type: 'boolean', default: false },
      senior: { type: 'string' },
      label: { type: 'string' },
      role: { type: 'string' },
      caregiver: { type: 'string' },
      id: { type: 'string' },
    },
    strict: true,
  });
  const uuid = (name: string) => {
    const v = required(values, name);
    if (!/^[0-9a-f-]{36}$/i.test(v)) throw new CliError(`--${name} must be a UUID`);
    return v;
  };
  switch (command) {
    case 'senior:create': {
      const id = await directory.createSenior({ displayName: required(values, 'name'), ...(values.preferred ? { preferredName: values.preferred } : {}), onboardingDone: values.onboarded });
      return [`senior: ${id}`];
    }
    case 'device:create': {
      const senior = uuid('senior');
      if (!(await directory.exists(senior))) throw new CliError(`no senior ${senior}`);
      const token = generateToken('kiosk');
      await directory.addDevice(senior, token, values.label ?? 'kiosk');
      return [`kiosk token: ${token}`];
    }
    case 'token:create': {
      const role = required(values, 'role');
      if (!['admin', 'operator', 'caregiver'].includes(role)) throw new CliError('--role must be admin, operator or caregiver');
      const token = generateToken(role as ApiRole);
      const id = await directory.addApiToken(role as ApiRole, token, required(values, 'label'));
      return [`${role} token id: ${id}`, `${role} token: ${token}`];
    }
    case 'token:revoke': {
      const id = uuid('id');
      if (!(await directory.revokeApiToken(id))) throw new CliError(`no token ${id}`);
      return [`token ${id} revoked`];
    }
    case 'caregiver:link': {
      const caregiver = uuid('caregiver');
      const senior = uuid('senior');
      const found = await directory.linkCaregiver(caregiver, senior);
      if (!found.senior) throw new CliError(`no senior ${senior}`);
      if (!found.caregiver) throw new CliError(`token ${caregiver} is not a caregiver token`);
      return [`caregiver ${caregiver} may now read senior ${senior}`];
    }
    case 'caregiver:unlink': {
      const caregiver = uuid('caregiver');
      const senior = uuid('senior');
      if (!(await directory.unlinkCaregiver(caregiver, senior))) throw new CliError(`caregiver ${caregiver} was not linked to senior ${senior}`);
      return [`caregiver ${caregiver} may no longer read senior ${senior}`];
    }
    default:
      throw new CliError(command ? `unknown command ${command}\n${USAGE}` : USAGE);
  }
}

async function main(): Promise<void> {
  const config = loadConfig();
  const db = await openCommandDatabase({ databaseUrl: config.DATABASE_URL, pgliteDataDir: config.PGLITE_DATA_DIR, pgliteSharedBuffersMb: config.PGLITE_SHARED_BUFFERS_MB }, 'npm run cli');
  try {
    for (const line of await runCommand(new SeniorDirectory(db.pool), process.argv.slice(2))) process.stdout.write(`${line}\n`);
  } finally {
    await db.close();
  }
}

if (import.meta.url === `file://${process.argv[1]}`) {
  exitOnHelp(USAGE);
  main().catch((err: unknown) => {
    const known = err instanceof CliError || err instanceof ConfigError || (err as { code?: string }).code?.startsWith('ERR_PARSE_ARGS');
    process.stderr.write(`${known ? (err as Error).message : `cli failed: ${(err as Error).message}`}\n`);
    process.exit(2);
  });
}
