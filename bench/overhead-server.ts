import { mkdir, writeFile } from 'node:fs/promises';
import { Session } from 'node:inspector';
import type { InspectionEvent } from 'xstate';
import { localHashVector } from '../adapters/embedders/local-hash-embedder.ts';
import { MistralEmbedClient } from '../adapters/embedders/mistral-embed-client.ts';
import type { MemoryEmbedderPort } from '../machines/memory/memory.port.ts';
import { loadConfig } from '../runtime/config.ts';
import { createLogger } from '../runtime/logger.ts';
import { startRuntime } from '../runtime/runtime.ts';
import { bulkLoadFacts } from '../test/support/database.ts';
import { grantAllConsents, seedBenchSeniors } from './support/seed-seniors.ts';
import { recordAgentStages, type AgentStages } from './load-probe.ts';

/**
 * The runtime side of bench:overhead, in its own process: the real runtime with its real
 * Mistral clients pointed at the fakes' process, and N bench seniors with every consent,
 * those the turns go to with 3 facts each. It timestamps each agent turn's stages (from XState's inspection events) and
 * each embedding request, and hands them over on `stages`. A fourth argument, a collector's URL,
 * turns the runtime's traces on (BENCH_TRACES=on).
 */
const [fakeUrl, seniorsArg, talkingArg, collectorUrl] = process.argv.slice(2);
const seniors = Number(seniorsArg);
/** The bench's turns go to the first `talking` sessions; the others are held live and idle. */
const talking = Number(talkingArg);
/** The local hash embedder's id: the fake serves its vectors, so the semantic cache is calibrated for them. */
const EMBED_MODEL = 'kohami-local-hash-v1';

export interface TurnStages extends AgentStages {
  turnId: string;
  /** Start times of the embedding requests made for this turn's question. */
  embeds: number[];
}

const turns = new Map<string, TurnStages>();
const byTranscript = new Map<string, TurnStages>();
/** The bench's own record of embedding requests (start times, per question): never logged. */
const counting = (inner: MemoryEmbedderPort): MemoryEmbedderPort => ({
  modelId: inner.modelId,
  embed: (texts, signal) => {
    if (texts.length === 1) byTranscript.get(texts[0]!)?.embeds.push(performance.now());
    return inner.embed(texts, signal);
  },
});

const inspect = (event: InspectionEvent): void =>
  recordAgentStages(turns, event, (turnId, transcript) => {
    const stages: TurnStages = { turnId, turn: performance.now(), embeds: [] };
    byTranscript.set(transcript, stages);
    return stages;
  });

const config = loadConfig({ KOHAMI_ENV: 'test', PORT: '0', PGLITE_DATA_DIR: 'memory://', MISTRAL_API_KEY: 'bench-key', MISTRAL_BASE_URL: fakeUrl!, ...(collectorUrl ? { OTEL_EXPORTER_OTLP_ENDPOINT: collectorUrl } : {}) });
// The runtime's own Mistral embeddings client, asking the fake for the local hash embedder's vectors.
const embedder = counting(new MistralEmbedClient({ apiKey: 'bench-key', baseUrl: fakeUrl!, env: 'test', model: EMBED_MODEL }));
const rt = await startRuntime(config, { logger: createLogger('silent'), rateLimit: { perSecond: 1e6, burst: 1e6 }, embedder, inspect });
await seedBenchSeniors(rt, seniors);
await grantAllConsents(rt);
// Facts for the talking seniors only (HNSW indexing 10,000 × 3 rows would take the run's time).
const ids = (
  await rt.db.pool.query<{ id: string }>("SELECT id FROM seniors WHERE display_name LIKE 'bench-%' ORDER BY substr(display_name, 7)::int LIMIT $1", [talking])
).rows.map((r) => r.id);
const facts = ['Elle aime jardiner le matin.', 'Sa fille Claire habite à Lyon.', 'Elle a été institutrice.'];
await bulkLoadFacts(
  rt.db,
  ids.flatMap((seniorId) => facts.map((fact) => ({ seniorId, fact, category: 'profil', embedding: localHashVector(fact) }))),
  EMBED_MODEL,
);

/**
 * With BENCH_PROF=1, a CPU profile of the measured turns only (between the first and second
 * `stages`, so neither start nor shutdown is in it): /tmp/prof-overhead/runtime-<N>.cpuprofile.
 */
const profiler = process.env.BENCH_PROF === '1' ? new Session() : null;
profiler?.connect();
const post = (method: string) => new Promise<unknown>((resolve, reject) => profiler!.post(method, (err, res) => (err ? reject(err) : resolve(res))));
let profiling = false;

process.send!({ type: 'ready', url: `${rt.url.replace('http', 'ws')}/v1/kiosk` });
process.on('message', (msg: { type: string }) => {
  if (msg.type !== 'stages') return;
  process.send!({ type: 'stages', turns: [...turns.values()] });
  turns.clear();
  byTranscript.clear();
  if (!profiler) return;
  if (!profiling) void post('Profiler.enable').then(() => post('Profiler.start'));
  else
    void post('Profiler.stop').then(async (res) => {
      await mkdir('/tmp/prof-overhead', { recursive: true });
      await writeFile(`/tmp/prof-overhead/runtime-${seniors}.cpuprofile`, JSON.stringify((res as { profile: unknown }).profile));
    });
  profiling = !profiling;
});
process.on('SIGINT', () => void rt.close().then(() => process.exit(0)));
