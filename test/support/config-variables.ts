import { loadConfig } from '../../runtime/config.ts';

/**
 * Every environment variable runtime/config.ts's schema reads, in the order it reads them. The
 * schema is not exported: the names are observed by parsing an environment that records each lookup.
 */
export function schemaVariables(): string[] {
  const read = new Set<string>();
  const env = new Proxy({} as NodeJS.ProcessEnv, {
    get(_target, name) {
      if (typeof name === 'string') read.add(name);
      return undefined;
    },
  });
  loadConfig(env);
  return [...read];
}
