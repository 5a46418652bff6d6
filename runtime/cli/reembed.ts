import { createModels } from '../../adapters/models/model-provider.ts';
import { PgMemoryFactsRepository } from '../../adapters/postgres/pg-memory-facts.repository.ts';
import { ConfigError, loadConfig } from '../config.ts';
import { openCommandDatabase } from '../db/database.ts';
import { reembedFacts } from '../jobs/reembed.ts';
import { exitOnHelp } from './usage.ts';

/**
 * `npm run memory:reembed`: re-embed facts with the configured embedder (Mistral with a
 * key, the local one without); through the runtime's database when it is up.
 */
exitOnHelp(`usage: npm run memory:reembed
  re-embeds the facts held with another embedding model than the configured one (Mistral with a key,
  the local embedder without); through the runtime's database when it is up`);
try {
  const config = loadConfig();
  const db = await openCommandDatabase({ databaseUrl: config.DATABASE_URL, pgliteDataDir: config.PGLITE_DATA_DIR, pgliteSharedBuffersMb: config.PGLITE_SHARED_BUFFERS_MB }, 'npm run memory:reembed');
  try {
    const { embedder } = createModels({ apiKey: config.MISTRAL_API_KEY, baseUrl: config.MISTRAL_BASE_URL, agentModelId: config.MISTRAL_AGENT_MODEL, subagentModelId: config.MISTRAL_SUBAGENT_MODEL, env: config.KOHAMI_ENV });
    const report = await reembedFacts(new PgMemoryFactsRepository(db.pool), embedder);
    const from = Object.entries(report.from).map(([model, n]) => `${n} from ${model}`).join(', ') || 'none needed';
    process.stdout.write(`re-embedded ${report.reembedded} facts with ${report.to} (${from})\n`);
  } finally {
    await db.close();
  }
} catch (err) {
  process.stderr.write(`${err instanceof ConfigError ? err.message : `memory:reembed failed: ${(err as Error).message}`}\n`);
  process.exit(1);
}
