import { loadConfig, type Config } from '../../runtime/config.ts';

/** A benchmark's runtime: embedded in-memory PGlite on a free port, the models at the fakes of MISTRAL_BASE_URL, `settings` over the defaults. */
export function benchRuntimeConfig(settings: Record<string, string> = {}): Config {
  return loadConfig({ KOHAMI_ENV: 'test', PORT: '0', PGLITE_DATA_DIR: 'memory://', MISTRAL_API_KEY: 'bench-key', MISTRAL_BASE_URL: process.env.MISTRAL_BASE_URL!, ...settings });
}
