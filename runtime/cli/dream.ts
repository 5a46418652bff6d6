import { parseArgs } from 'node:util';
import { createModels } from '../../adapters/models/model-provider.ts';
import { ProviderGate } from '../../adapters/models/provider-gate.ts';
import { PgConsentAdapter } from '../../adapters/postgres/pg-consent.adapter.ts';
import { PgDreamRepository } from '../../adapters/postgres/pg-dream.repository.ts';
import { PgMemoryFactsRepository } from '../../adapters/postgres/pg-memory-facts.repository.ts';
import { PgMoodScoresRepository } from '../../adapters/postgres/pg-mood-scores.repository.ts';
import { PgProfilesRepository } from '../../adapters/postgres/pg-profiles.repository.ts';
import { PgSegmentsRepository } from '../../adapters/postgres/pg-segments.repository.ts';
import { PgVectorMemoryAdapter } from '../../adapters/memory/pgvector-memory.adapter.ts';
import { MistralSmallConsolidator } from '../../adapters/subagents/mistral-small-consolidator.ts';
import { parisDay } from '../../machines/memory/dream.ts';
import { ConfigError, loadConfig } from '../config.ts';
import { openCommandDatabase } from '../db/database.ts';
import { Dream } from '../jobs/dream.ts';
import { createLogger } from '../logger.ts';
import { exitOnHelp } from './usage.ts';

/** `npm run dream -- --senior ID [--day YYYY-MM-DD]`: one consolidation now, and what it did. */
const USAGE = `usage: npm run dream -- --senior SENIOR_ID [--day YYYY-MM-DD]
  the nightly consolidation of one senior's day (default today, Paris time), now; prints what it did`;
exitOnHelp(USAGE);
try {
  const { values } = parseArgs({ options: { senior: { type: 'string' }, day: { type: 'string' } } });
  if (!values.senior || !/^[0-9a-f-]{36}$/i.test(values.senior)) throw new ConfigError(USAGE);
  const config = loadConfig();
  const db = await openCommandDatabase({ databaseUrl: config.DATABASE_URL, pgliteDataDir: config.PGLITE_DATA_DIR, pgliteSharedBuffersMb: config.PGLITE_SHARED_BUFFERS_MB }, 'npm run dream');
  try {
    const models = createModels({ apiKey: config.MISTRAL_API_KEY, baseUrl: config.MISTRAL_BASE_URL, agentModelId: config.MISTRAL_AGENT_MODEL, subagentModelId: config.MISTRAL_SUBAGENT_MODEL, env: config.KOHAMI_ENV });
    const logger = createLogger('warn');
    const dream = new Dream({
      store: new PgDreamRepository(db.pool),
      moodScores: new PgMoodScoresRepository(db.pool),
      segments: new PgSegmentsRepository(db.pool),
      facts: new PgMemoryFactsRepository(db.pool),
      consents: new PgConsentAdapter(db.pool),
      memory: new PgVectorMemoryAdapter(db.pool, models.embedder, logger),
      embedder: models.embedder,
      profiles: new PgProfilesRepository(db.pool),
      // Through a gate, as in the runtime: a 429's Retry-After is not answered with a call at once.
      consolidator: new MistralSmallConsolidator(new ProviderGate().wrap(models.subagent)),
    });
    const report = await dream.consolidate(values.senior, values.day ?? parisDay(new Date()));
    const lines = report.skipped
      ? [`dream for ${report.seniorId} on ${report.day}: skipped (${report.skipped})`]
      : [
          `dream for ${report.seniorId} on ${report.day}`,
          `  promoted to durable facts: ${report.promoted.length ? report.promoted.map((p) => `« ${p} »`).join(', ') : 'none'}`,
          `  candidates waiting:        ${report.candidates}`,
          `  compass written:           ${report.compassWritten ? 'yes' : 'no (nothing to consolidate)'}`,
          `  interlocutor enriched:     ${report.profileEnriched ? 'yes' : 'no'}`,
          `  notes purged (> 30 days):  ${report.notesPurged}`,
          `  segments vectorized:       ${report.segmentsVectorized}`,
        ];
    process.stdout.write(`${lines.join('\n')}\n`);
  } finally {
    await db.close();
  }
} catch (err) {
  process.stderr.write(`${err instanceof ConfigError ? err.message : `dream failed: ${(err as Error).message}`}\n`);
  process.exit(2);
}
