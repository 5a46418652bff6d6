import { writeFileSync } from 'node:fs';
import { Session } from 'node:inspector';
import { constants, monitorEventLoopDelay, PerformanceObserver } from 'node:perf_hooks';
import { Listener } from '../machines/voice/listener.ts';
import { SileroSpeechProbability } from '../adapters/voice/silero-vad.ts';
import { WebRtcVoiceGate } from '../adapters/voice/webrtc-vad.ts';
import { CONSENT_CATEGORIES } from '../machines/memory/memory.port.ts';
import { benchRuntimeConfig } from './support/runtime-config.ts';
import { createLogger } from '../runtime/logger.ts';
import { startRuntime } from '../runtime/runtime.ts';
import { seedBenchSeniors } from './support/seed-seniors.ts';
import { percentile } from './support/stats.ts';

/**
 * The runtime side of bench:voice, in its own process so that its RSS and CPU are its own.
 *   argv: gated|silero seniors   env: MISTRAL_BASE_URL (the fakes), ENDPOINT_SILENCE_MS
 * Instrumentation, in this process only (V1's classes patched here, nowhere else): how far behind real
 * time each microphone chunk's analysis ends (below), how long the listener itself took, the event
 * loop's delay, garbage-collection pauses, Silero windows run, and the runtime's own voice stage
 * timings. `silero` opens the WebRTC gate for every frame: Silero alone, the baseline the gate is
 * measured against. BENCH_HEAP_PROF=/file.heapprofile samples, over the measured window, the allocations
 * that survived a scavenge (promoted to the old generation, what drives mark-compacts), for DevTools.
 */
const variant = process.argv[2];
const seniors = Number(process.argv[3]);

if (variant === 'silero') WebRtcVoiceGate.prototype.isVoiced = () => true;

/**
 * Per listener (one per voice session): when each chunk was pushed and analysed, against how much audio
 * the stream had carried by then. A real-time stream's chunk cannot arrive before the stream's start plus
 * its audio so far: the earliest such start seen is the schedule, and a chunk's lag is how long after that
 * schedule its analysis ended — event-loop waits, the listener's queue and the generator's own lateness
 * included (the last is reported by the generator).
 */
interface Stream {
  audioMs: number;
  /** min over chunks of (push time − audio ms up to the chunk's end) */
  schedule: number;
  /** analysis end − audio ms up to the chunk's end, for chunks pushed since the last reset */
  done: number[];
}
const streams = new Map<Listener, Stream>();
let analysis: number[] = [];
const push = Listener.prototype.push;
Listener.prototype.push = function (this: Listener, pcm: Int16Array) {
  const at = performance.now();
  let stream = streams.get(this);
  if (!stream) streams.set(this, (stream = { audioMs: 0, schedule: Infinity, done: [] }));
  stream.audioMs += (pcm.length / 16_000) * 1000;
  const audioMs = stream.audioMs;
  stream.schedule = Math.min(stream.schedule, at - audioMs);
  const analysed = push.call(this, pcm);
  const s = stream;
  analysed.then(
    () => {
      const end = performance.now();
      analysis.push(end - at);
      s.done.push(end - audioMs);
    },
    () => undefined,
  );
  return analysed;
};
let windows = 0;
const probability = SileroSpeechProbability.prototype.probability;
SileroSpeechProbability.prototype.probability = function (this: SileroSpeechProbability, window: Int16Array) {
  windows += 1;
  return probability.call(this, window);
};

function fixedEndpoint(ms: number): Record<string, string> {
  return { ENDPOINT_MIN_MS: String(ms - 1), ENDPOINT_SILENCE_MS: String(ms), ENDPOINT_UNFINISHED_MS: String(ms + 1), ENDPOINT_MAX_MS: String(ms + 1) };
}

const config = benchRuntimeConfig({
  // The endpoint held at one silence (every cue's wait within 1 ms of it): this bench measures the
  // pipeline after a known endpoint; how a turn ends on cues is bench:turns's subject.
  ...fixedEndpoint(Number(process.env.ENDPOINT_SILENCE_MS ?? 700)),
  ...(process.env.PREEMPTIVE_TURN ? { PREEMPTIVE_TURN: process.env.PREEMPTIVE_TURN } : {}),
});
// The per-socket text-frame limit (20/s) is not what is measured; microphone audio has its own budget.
const rt = await startRuntime(config, { logger: createLogger('silent'), rateLimit: { perSecond: 1e6, burst: 1e6 } });
// Each senior's name (Voice<i>) reaches the recognizer as its context bias: the fakes tell the sessions' scripts apart by it.
await seedBenchSeniors(rt, seniors, { namePrefix: 'Voice' });
// Every consent, so that turns reach the agent (without the conversation consent, the neutral line answers from RAM).
const { rows } = await rt.db.pool.query<{ id: string }>('SELECT id FROM seniors');
for (const { id } of rows) for (const category of CONSENT_CATEGORIES) await rt.consents.grant(id, category);

/** Every stage timing observed since the last reset (ms), for its tail: the metric itself keeps only buckets. */
let stageSamples: Record<string, number[]> = {};
/**
 * Per answered turn, as the runtime itself saw it: end of speech → transcript (transcription) + transcript →
 * first reply-audio frame sent (first_audio), less the fakes' latencies — the kiosk's "after the endpoint"
 * without the two sockets and the generator. A turn's stages are observed together, first_audio last.
 */
let afterEndpointSamples: number[] = [];
let transcriptionMs = NaN;
const observe = rt.metrics.voiceStage.observe.bind(rt.metrics.voiceStage);
rt.metrics.voiceStage.observe = ((labels: { stage: string }, seconds: number) => {
  (stageSamples[labels.stage] ??= []).push(seconds * 1000);
  if (labels.stage === 'transcription') transcriptionMs = seconds * 1000;
  if (labels.stage === 'first_audio' && Number.isFinite(transcriptionMs)) afterEndpointSamples.push(transcriptionMs + seconds * 1000);
  if (labels.stage === 'first_audio') transcriptionMs = NaN;
  observe(labels, seconds);
}) as typeof rt.metrics.voiceStage.observe;

/** The runtime's own per-stage timings of voice turns (kohami_voice_stage_seconds): sum and count per stage. */
async function stageTotals(): Promise<Record<string, { sum: number; count: number }>> {
  const totals: Record<string, { sum: number; count: number }> = {};
  for (const v of (await rt.metrics.voiceStage.get()).values) {
    const kind = v.metricName?.endsWith('_sum') ? 'sum' : v.metricName?.endsWith('_count') ? 'count' : null;
    if (!kind) continue;
    const stage = String(v.labels.stage);
    totals[stage] ??= { sum: 0, count: 0 };
    totals[stage][kind] += v.value;
  }
  return totals;
}

const loop = monitorEventLoopDelay({ resolution: 5 });
/** Garbage-collection pauses: the event loop stalls the collector causes, told apart from the runtime's own work. */
let gcPauses: number[] = [];
/** Per kind of collection (scavenge, mark-compact …): how many and how long, to tell young-generation churn from a full heap. */
let gcByKind: Record<string, { count: number; ms: number; maxMs: number }> = {};
const GC_KINDS: Record<number, string> = {
  [constants.NODE_PERFORMANCE_GC_MINOR]: 'scavenge',
  [constants.NODE_PERFORMANCE_GC_MAJOR]: 'mark-compact',
  [constants.NODE_PERFORMANCE_GC_INCREMENTAL]: 'incremental',
  [constants.NODE_PERFORMANCE_GC_WEAKCB]: 'weak callbacks',
};
new PerformanceObserver((list) => {
  for (const e of list.getEntries()) {
    gcPauses.push(e.duration);
    const kind = GC_KINDS[(e as PerformanceEntry & { detail?: { kind: number } }).detail?.kind ?? -1] ?? 'other';
    const k = (gcByKind[kind] ??= { count: 0, ms: 0, maxMs: 0 });
    k.count += 1;
    k.ms += e.duration;
    k.maxMs = Math.max(k.maxMs, e.duration);
  }
}).observe({ entryTypes: ['gc'] });
/** Sampling heap profiler (BENCH_HEAP_PROF): objects collected young are left out, promoted ones kept even once dead. */
const heapProfile = process.env.BENCH_HEAP_PROF;
const inspector = heapProfile ? new Session() : null;
inspector?.connect();
let sampling = false;
const inspect = (method: string, params?: object) =>
  new Promise<unknown>((resolve, reject) => inspector!.post(method, params ?? {}, (err, result) => (err ? reject(err) : resolve(result))));
let stagesAtReset: Record<string, { sum: number; count: number }> = {};
/** The measured window as it stood at its end ('stop'), summed up later by 'measure'. */
let stopped: {
  elapsedMs: number;
  cpuMs: number;
  stages: Record<string, number>;
  loopP99Ms: number;
  sessions: number;
  windows: number;
  analysis: number[];
  streams: Array<Pick<Stream, 'done' | 'schedule'>>;
  gcPauses: number[];
  gcByKind: typeof gcByKind;
  stageSamples: typeof stageSamples;
  afterEndpointSamples: number[];
} | null = null;
let cpu = process.cpuUsage();
let since = performance.now();
/** A new window: the per-sample records start empty (the previous window's were set aside or dropped). */
function clearSamples(): void {
    analysis = [];
    gcPauses = [];
    gcByKind = {};
    stageSamples = {};
    afterEndpointSamples = [];
    for (const stream of streams.values()) stream.done = [];
}

process.send!({ type: 'ready', url: `${rt.url.replace('http', 'ws')}/v1/kiosk` });
process.on('message', async (msg: { type: string }) => {
  if (msg.type === 'memory') {
    // Full collections first, so that what is measured is what the sessions hold. They stop this thread for
    // 200–300 ms at 50–100 sessions: the bench asks after the window, once its replies have arrived.
    for (let i = 0; i < 3; i++) global.gc?.();
    const { rss, heapUsed, external, heapTotal } = process.memoryUsage();
    return process.send!({ type: 'memory', rss, heap: heapUsed + external, heapTotalMiB: heapTotal / 2 ** 20 });
  }
  if (msg.type === 'reset') {
    stagesAtReset = await stageTotals();
    clearSamples();
    windows = 0;
    loop.reset();
    loop.enable();
    cpu = process.cpuUsage();
    since = performance.now();
    if (inspector && !sampling) sampling = await inspect('HeapProfiler.startSampling', { samplingInterval: 16_384, includeObjectsCollectedByMajorGC: true, includeObjectsCollectedByMinorGC: false }).then(() => true);
    return process.send!({ type: 'reset' });
  }
  if (msg.type === 'stop') {
    // The window ends here, and only cheap work is done now: the samples are set aside and summed up on
    // 'measure', once the window's replies have arrived — sorting ~10⁵ samples (~100 ms at 50 sessions), like
    // the collections of 'memory', stalls this thread and made the replies then in flight the run's slowest.
    const elapsedMs = performance.now() - since;
    const used = process.cpuUsage(cpu);
    loop.disable();
    const totals = await stageTotals();
    stopped = {
      elapsedMs,
      cpuMs: (used.user + used.system) / 1000,
      stages: Object.fromEntries(Object.entries(totals).map(([stage, t]) => {
        const before = stagesAtReset[stage] ?? { sum: 0, count: 0 };
        return [stage, ((t.sum - before.sum) / (t.count - before.count)) * 1000];
      })),
      loopP99Ms: loop.percentile(99) / 1e6,
      sessions: rt.registry.size,
      windows,
      analysis,
      streams: [...streams.values()].map(({ done, schedule }) => ({ done, schedule })),
      gcPauses,
      gcByKind,
      stageSamples,
      afterEndpointSamples,
    };
    clearSamples();
    return process.send!({ type: 'stop' });
  }
  if (msg.type !== 'measure' || !stopped) return;
  if (sampling && heapProfile) {
    sampling = false;
    const { profile } = (await inspect('HeapProfiler.stopSampling')) as { profile: unknown };
    writeFileSync(heapProfile, JSON.stringify(profile));
  }
  const w = stopped;
  const lags = w.streams.flatMap((stream) => stream.done.map((d) => d - stream.schedule));
  process.send!({
    type: 'measure',
    stagesMs: w.stages,
    afterEndpointP50Ms: percentile(w.afterEndpointSamples, 50),
    afterEndpointP99Ms: percentile(w.afterEndpointSamples, 99),
    stagesP99Ms: Object.fromEntries(Object.entries(w.stageSamples).map(([stage, xs]) => [stage, percentile(xs, 99)])),
    // Transcript → first reply-audio frame sent, per turn: with the preemptive turn, its own time when the speech was ready.
    firstAudioSamples: w.stageSamples.first_audio ?? [],
    speculations: Object.fromEntries((await rt.metrics.preemptiveTurns.get()).values.map((v) => [String(v.labels.outcome), v.value])),
    sessions: w.sessions,
    frames: w.analysis.length,
    analysisP50Ms: percentile(w.analysis, 50),
    analysisP99Ms: percentile(w.analysis, 99),
    lagP50Ms: percentile(lags, 50),
    lagP99Ms: percentile(lags, 99),
    loopP99Ms: w.loopP99Ms,
    gcP99Ms: percentile(w.gcPauses, 99),
    gcMaxMs: Math.max(0, ...w.gcPauses),
    gcByKind: w.gcByKind,
    gcMsPerSecond: (w.gcPauses.reduce((a, b) => a + b, 0) / w.elapsedMs) * 1000,
    cpuPct: (w.cpuMs / w.elapsedMs) * 100,
    sileroPerSecond: (w.windows / w.elapsedMs) * 1000,
  });
});
process.on('SIGTERM', () => process.exit(0));
