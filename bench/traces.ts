import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { loadavg } from 'node:os';
import { ModelCallSpan } from '../adapters/telemetry/model-call-span.ts';
import { tracedCacheFlux, tracedConsents, tracedMemory, tracedRecall, tracedSemanticCache } from '../adapters/telemetry/traced-ports.ts';
import { createTracing, SPAN_BATCH_MAX, type Tracing } from '../adapters/telemetry/tracing.ts';
import { TurnTraces } from '../adapters/telemetry/turn-traces.ts';
import type { ConsentPort, MemoryPort } from '../machines/memory/memory.port.ts';
import type { CacheFluxPort, RecallPort, SemanticCachePort } from '../machines/session/ports.ts';
import { docComment, exitOnHelp } from '../runtime/cli/usage.ts';

exitOnHelp(() => docComment(import.meta.url));

/**
 * bench:traces — what an agent turn's spans cost the process: the turn and its stages as the runtime
 * traces them (the traced ports around CacheFlux, recall with its consent query and memory search, the
 * semantic cache, and the model call's GenAI span with its first token and finish), around ports that
 * answer at once, so that only the tracing is measured.
 *   - baseline: the same ports unwrapped, no span at all;
 *   - no-op API: OTEL_EXPORTER_OTLP_ENDPOINT unset (the runtime's default);
 *   - SDK + batch exporter: the runtime's provider, exporting over OTLP/HTTP to a local collector that
 *     answers 200 at once; its CPU includes the batches' serialization and requests (flushed at the end).
 * Rounds alternate the three, BENCH_TURNS turns each (default 20,000), each turn followed by an
 * event-loop turn (as a turn's I/O gives the exports their chance); the median round is reported.
 *   npm run bench:traces
 */
const TURNS = Number(process.env.BENCH_TURNS ?? 20_000);
const ROUNDS = Number(process.env.BENCH_ROUNDS ?? 5);
const SENIOR = '3702a25f-0000-4000-8000-000000000001';
const profile = { preferredName: 'Marie', isFreshSenior: false };
const signal = new AbortController().signal;

const cacheFlux: CacheFluxPort = { resolve: () => null, sosFallback: () => '', sosAfterPartial: () => '' };
const consents: ConsentPort = { hasConsent: async () => true, activeCategories: async () => new Set() };
const memory: MemoryPort = { persist: async () => ({}) as never, invalidate: async () => false, search: async () => [], deleteSenior: async () => 0 };
const cache: SemanticCachePort = { lookup: async () => ({ kind: 'bypass' }) };
const model = { provider: 'mistral.chat', modelId: 'mistral-small-2603' };

function recallOver(c: ConsentPort, m: MemoryPort): RecallPort {
  return {
    recall: async ({ seniorId, transcript }) => {
      if (!(await c.hasConsent(seniorId, 'conversation', signal))) return { kind: 'reply', text: '', flux: 'neutral' };
      return { kind: 'facts', facts: (await m.search(transcript, seniorId, 5, signal)).map(({ content, category }) => ({ content, category })) };
    },
  };
}

interface Variant {
  name: string;
  turn(i: number): Promise<void>;
  tracing?: Tracing;
}

function bare(): Variant {
  const recall = recallOver(consents, memory);
  return {
    name: 'baseline: no tracing',
    turn: async () => {
      cacheFlux.resolve('q', profile);
      await recall.recall({ seniorId: SENIOR, transcript: 'q' }, signal);
      await cache.lookup({ seniorId: SENIOR, question: 'q', previous: null, promptVersion: 'v' }, signal);
    },
  };
}

function traced(name: string, tracing: Tracing): Variant {
  const traces = new TurnTraces(tracing.tracer);
  const flux = tracedCacheFlux(cacheFlux, SENIOR, traces);
  const recall = tracedRecall(recallOver(tracedConsents(consents, traces), tracedMemory(memory, traces)), traces);
  const lookup = tracedSemanticCache(cache, traces);
  return {
    name,
    tracing,
    turn: async (i) => {
      const ids = { sessionId: 'bench-session', seniorId: SENIOR, turnId: `t${i}` };
      traces.begin(ids, 'text');
      flux.resolve('q', profile);
      await recall.recall({ seniorId: SENIOR, transcript: 'q' }, signal);
      await lookup.lookup({ seniorId: SENIOR, question: 'q', previous: null, promptVersion: 'v' }, signal);
      const call = ModelCallSpan.start(traces, SENIOR, model, { maxTokens: 300, tools: true });
      call?.firstToken();
      call?.finish({ unified: 'stop', raw: 'stop' }, { inputTokens: { total: 900, noCache: 900, cacheRead: 0, cacheWrite: 0 }, outputTokens: { total: 40, text: 40, reasoning: undefined } });
      call?.end();
      traces.end(ids, { flux: 'agent', latencyMs: 30 });
    },
  };
}

async function round(variant: Variant): Promise<{ wallUs: number; cpuUs: number }> {
  const cpu = process.cpuUsage();
  const start = performance.now();
  for (let i = 0; i < TURNS; i += 1) {
    await variant.turn(i);
    // A turn spans event-loop turns (its I/O): the batch processor's exports run between them, as in the runtime.
    await new Promise((resolve) => setImmediate(resolve));
  }
  const wall = performance.now() - start;
  // The batch processor's exports of this round are part of its cost.
  await variant.tracing?.flush();
  const used = process.cpuUsage(cpu);
  return { wallUs: (wall * 1000) / TURNS, cpuUs: (used.user + used.system) / TURNS };
}

const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]!;

let received = 0;
const collector = http.createServer((req, res) => {
  req.on('data', () => {});
  req.on('end', () => {
    received += 1;
    res.writeHead(200, { 'content-type': 'application/json' }).end('{}');
  });
});
await new Promise<void>((resolve) => collector.listen(0, '127.0.0.1', resolve));
const endpoint = `http://127.0.0.1:${(collector.address() as AddressInfo).port}`;

const sdk = await createTracing({ endpoint, serviceName: 'kohami-bench', instanceId: 'bench' });
const variants = [bare(), traced('no-op API (OTEL_EXPORTER_OTLP_ENDPOINT unset)', await createTracing({ endpoint: undefined, serviceName: 'kohami-bench', instanceId: 'bench' })), traced('SDK + batch exporter (OTLP/HTTP)', sdk)];
const results = new Map(variants.map((v) => [v.name, [] as Array<{ wallUs: number; cpuUs: number }>]));
// A warm-up round of each, not counted.
for (const v of variants) await round(v);
for (let r = 0; r < ROUNDS; r += 1) for (const v of variants) results.get(v.name)!.push(await round(v));
await sdk.shutdown(2_000);
collector.close();

const base = median(results.get(variants[0]!.name)!.map((x) => x.cpuUs));
console.log(`bench:traces — an agent turn's spans (turn + CacheFlux, recall, consent, search, semantic cache, model call: 7 spans), ${TURNS} turns × ${ROUNDS} rounds; node ${process.version}, load ${loadavg()[0]!.toFixed(2)}\n`);
console.log('| variant | µs per turn (wall) | CPU µs per turn (with exports) | CPU − baseline µs |');
console.log('|---|---:|---:|---:|');
for (const v of variants) {
  const rows = results.get(v.name)!;
  const cpu = median(rows.map((x) => x.cpuUs));
  console.log(`| ${v.name} | ${median(rows.map((x) => x.wallUs)).toFixed(2)} | ${cpu.toFixed(2)} | ${(cpu - base).toFixed(2)} |`);
}
// 7 spans a turn, in batches of SPAN_BATCH_MAX (each round's flush may send one part-filled): fewer requests would mean spans dropped (the queue is bounded).
const expected = Math.ceil(((ROUNDS + 1) * TURNS * 7) / SPAN_BATCH_MAX);
console.log(`\nexport requests received by the collector: ${received} (at least ${expected} if no span was dropped)`);
