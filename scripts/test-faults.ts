import { spawn } from 'node:child_process';
import { readdirSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { exitOnHelp } from '../runtime/cli/usage.ts';

/**
 * `npm run test:faults [-- NAME…]`: the fault tests, or only the files whose name contains a NAME. Vitest's
 * own filters cannot narrow a folder given on its command line (a file matches the folder OR a filter),
 * hence this. Vitest's options pass through in their `--option=value` form.
 */
const DIR = 'test/faults/';
const USAGE = `usage: npm run test:faults [-- NAME… [--vitest-option=value…]]
  runs test/faults/*.test.ts, or only the files whose name contains a NAME
  (\`npm run test:faults -- erasure\` runs erasure-race and erasure-across-processes; a path works too)`;

exitOnHelp(USAGE);
const args = process.argv.slice(2);
const files = readdirSync(DIR)
  .filter((f) => f.endsWith('.test.ts'))
  .sort();
const names = args.filter((a) => !a.startsWith('-')).map((a) => a.replace(DIR, ''));
const chosen = names.length === 0 ? files : files.filter((f) => names.some((n) => f.includes(n)));
const unmatched = names.filter((n) => !files.some((f) => f.includes(n)));
if (unmatched.length > 0) {
  process.stderr.write(`no fault test file matches ${unmatched.join(', ')}; there are:\n  ${files.join('\n  ')}\n${USAGE}\n`);
  process.exit(2);
}
const vitest = fileURLToPath(new URL('../node_modules/vitest/vitest.mjs', import.meta.url));
const child = spawn(process.execPath, [vitest, 'run', ...chosen.map((f) => `${DIR}${f}`), ...args.filter((a) => a.startsWith('-'))], { stdio: 'inherit' });
child.on('exit', (code, signal) => process.exit(code ?? (signal ? 1 : 0)));
