import { readFileSync } from 'node:fs';

/**
 * `--help` or `-h` among a command's arguments: its usage on stdout and exit 0, before the command
 * opens a database, writes a file or listens — so asking how to use a command never runs it.
 */
export function exitOnHelp(usage: string | (() => string), argv: readonly string[] = process.argv.slice(2)): void {
  if (!argv.includes('--help') && !argv.includes('-h')) return;
  process.stdout.write(`${typeof usage === 'string' ? usage : usage()}\n`);
  process.exit(0);
}

/** A script's first doc comment, without its comment marks: the usage of a bench or build script, kept in one place. */
export function docComment(fileUrl: string): string {
  const comment = /\/\*\*([\s\S]*?)\*\//.exec(readFileSync(new URL(fileUrl), 'utf8'))?.[1];
  if (comment === undefined) throw new Error(`${fileUrl}: no doc comment to print as its usage`);
  return comment
    .split('\n')
    .map((line) => line.replace(/^\s*\* ?/, ''))
    .join('\n')
    .trim();
}
