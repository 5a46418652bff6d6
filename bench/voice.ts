import { fork } from 'node:child_process';
import { once } from 'node:events';
import { loadavg } from 'node:os';
import { monitorEventLoopDelay } from 'node:perf_hooks';
import WebSocket from 'ws';
import { decodeAudioFrame } from '../runtime/protocol/frame-header.ts';
import { INPUT_SAMPLE_RATE } from '../machines/voice/voice.port.ts';
import { frenchSpeech, speechScript, type ScriptPart } from '../test/support/speech.ts';
import { ask, stopWithFakes } from './support/child.ts';
import { percentile } from './support/stats.ts';
import { docComment, exitOnHelp } from '../runtime/cli/usage.ts';

exitOnHelp(() => docComment(import.meta.url));

/**
 * bench:voice — N concurrent voice kiosks over real sockets, each streaming French speech
 * (espeak-ng) in real time in 20 ms frames with pauses (about 35 % speech), against the loopback
 * fakes of Mistral's audio APIs with fixed latencies: the final transcript FAKE_STT_MS after the
 * flush, the first speech byte FAKE_TTS_MS after the request; the agent answers at once. Runtime,
 * fakes and this generator are three processes on the same machine. Silero alone (the WebRTC gate
 * always open) runs beside the gated pipeline as the baseline.
 *   npm run bench:voice [-- N1 N2 …]   (default 10 25 35 50 75 100 150; BENCH_SECONDS=15;
 *   BENCH_VARIANTS=gated,silero; BENCH_PROF=/dir writes the runtime's CPU profiles there;
 *   BENCH_NODE_ARGS='--trace-gc' adds flags to the runtime process)
 */
const sizes = process.argv.slice(2).map(Number).filter(Boolean);
const SIZES = sizes.length > 0 ? sizes : [10, 25, 35, 50, 75, 100, 150];
const LOAD_SECONDS = Number(process.env.BENCH_SECONDS ?? 15);
const WARMUP_SECONDS = 4;
/** Small sizes run longer, so that every size's p99 stands on at least this many phrases. */
const MIN_UTTERANCES = 120;
const FAKE_STT_MS = 150;
const FAKE_TTS_MS = 200;
const ENDPOINT_SILENCE_MS = 700;
/** Frame processing must stay this close behind real time (the frame's arrival), at p99. */
const HELD_LAG_MS = 20;
const FRAME_MS = 20;
const FRAME_SAMPLES = (INPUT_SAMPLE_RATE * FRAME_MS) / 1000;
const SPEECH_SHARE = 0.35;

/**
 * Held-out speech: none of these phrases was used to tune endpointing (its tuning phrases are in
 * test/unit/voice-endpointing.test.ts), so the endpointing and the turn after it are measured on speech
 * the code was not fitted to.
 */
const PHRASES = [
  'Ce matin, j’ai arrosé les tomates du jardin avant le petit déjeuner.',
  'Ma fille m’a appelée hier soir, elle viendra dimanche avec les enfants.',
  'Je ne retrouve plus mes lunettes, je crois qu’elles sont dans la cuisine.',
  'Tu te souviens de la chanson que chantait ma mère le soir ?',
  'Le facteur est passé tôt, il m’a apporté une carte de ma sœur.',
  'J’aimerais bien refaire la tarte aux pommes de ma grand-mère.',
  'Cet après-midi, mon voisin m’emmène à la pharmacie en voiture.',
  'Quand j’étais petite, nous allions à la mer tous les étés en Bretagne.',
];
const TRANSCRIPTS = [
  'ce matin j’ai arrosé les tomates du jardin avant le petit déjeuner',
  'ma fille m’a appelée hier soir elle viendra dimanche avec les enfants',
  'je ne retrouve plus mes lunettes je crois qu’elles sont dans la cuisine',
  'tu te souviens de la chanson que chantait ma mère le soir',
  'le facteur est passé tôt il m’a apporté une carte de ma sœur',
  'j’aimerais bien refaire la tarte aux pommes de ma grand-mère',
  'cet après-midi mon voisin m’emmène à la pharmacie en voiture',
  'quand j’étais petite nous allions à la mer tous les étés en bretagne',
];

interface Loop {
  pcm: Int16Array;
  frames: number;
  /** Per frame: the sample (within the frame) where a spoken phrase ends, if one does. */
  speechEnds: Map<number, number>;
  /** Where each phrase's speech lies in the loop (ms), in order: the recognizer fake finds a kiosk's audio in the loop, and so what it says. */
  phrases: Array<{ startMs: number; endMs: number }>;
  speechShare: number;
}

/** The phrases, each followed by the pause that makes speech about 35 % of the stream; a whole number of frames. */
async function buildLoop(): Promise<Loop> {
  const parts: ScriptPart[] = [];
  for (const phrase of PHRASES) {
    const ms = ((await frenchSpeech(phrase)).length / INPUT_SAMPLE_RATE) * 1000;
    parts.push(phrase, { silenceMs: Math.round((ms * (1 - SPEECH_SHARE)) / SPEECH_SHARE) });
  }
  const script = await speechScript(parts);
  const frames = Math.ceil(script.pcm.length / FRAME_SAMPLES);
  const pcm = new Int16Array(frames * FRAME_SAMPLES);
  pcm.set(script.pcm);
  const speechEnds = new Map<number, number>();
  for (const s of script.speech) {
    const end = Math.round((s.endMs * INPUT_SAMPLE_RATE) / 1000);
    speechEnds.set(Math.floor(end / FRAME_SAMPLES), end % FRAME_SAMPLES);
  }
  const spoken = script.speech.reduce((sum, s) => sum + s.endMs - s.startMs, 0);
  return { pcm, frames, speechEnds, phrases: script.speech, speechShare: spoken / ((pcm.length / INPUT_SAMPLE_RATE) * 1000) };
}

interface Utterance {
  /** When the last audible sample of the phrase left (generator clock). */
  endAt: number;
  stoppedAt?: number;
  /** transcript.final at the kiosk. */
  finalAt?: number;
  turnId?: string;
  firstAudioAt?: number;
  flux?: string;
}

/** One kiosk: streams the loop from its own offset, in real time; records its utterances' timings. */
class PacedKiosk {
  readonly utterances: Utterance[] = [];
  /** How late each frame left against its schedule (the generator's own lag). */
  readonly lateness: number[] = [];
  private lastEnd: number | null = null;
  private readonly byTurn = new Map<string, Utterance>();
  private timer: NodeJS.Timeout | null = null;
  private stopped = false;

  readonly ws: WebSocket;
  private readonly loop: Loop;

  private constructor(ws: WebSocket, loop: Loop) {
    this.ws = ws;
    this.loop = loop;
    ws.on('message', (raw, isBinary) => {
      const now = performance.now();
      if (isBinary) {
        const u = this.byTurn.get(decodeAudioFrame(new Uint8Array(raw as Buffer)).turnId);
        if (u && u.firstAudioAt === undefined) u.firstAudioAt = now;
        return;
      }
      const f = JSON.parse(raw.toString()) as { type: string; state?: string; turnId?: string; flux?: string };
      if (f.type === 'vad' && f.state === 'speech_stopped' && this.lastEnd !== null) {
        this.utterances.push({ endAt: this.lastEnd, stoppedAt: now });
        this.lastEnd = null;
      } else if (f.type === 'transcript.final') {
        const u = this.utterances.at(-1);
        if (u && u.turnId === undefined) {
          u.turnId = f.turnId!;
          u.finalAt = now;
          this.byTurn.set(f.turnId!, u);
        }
      } else if (f.type === 'reply.done') {
        const u = this.byTurn.get(f.turnId!);
        if (u) u.flux = f.flux!;
      } else if (f.type === 'reply.audio.end') {
        // This kiosk plays nothing: the reply counts as heard at once, so the next phrase is a new turn, not a barge-in.
        ws.send(JSON.stringify({ type: 'playback.done', turnId: f.turnId }));
      }
    });
  }

  static async open(url: string, index: number, loop: Loop): Promise<PacedKiosk> {
    const token = `kiosk_bench_${index}`;
    const ws = new WebSocket(`${url}?token=${token}`);
    await once(ws, 'open');
    ws.send(
      JSON.stringify({
        type: 'session.start',
        mode: 'voice',
        audio: { input: { encoding: 'pcm_s16le', sampleRate: INPUT_SAMPLE_RATE }, output: { accept: [{ encoding: 'pcm_s16le', sampleRate: 16_000 }] }, kiosk: { aec: true } },
      }),
    );
    const [ready] = (await once(ws, 'message')) as [Buffer];
    const frame = JSON.parse(ready.toString()) as { type: string; audio?: { voiceInput: boolean } };
    if (frame.type !== 'session.ready' || !frame.audio?.voiceInput) throw new Error(`no voice session: ${ready.toString()}`);
    return new PacedKiosk(ws, loop);
  }

  /** Frame k of this kiosk leaves at start + 20·k ms, from `offset` frames into the loop. */
  stream(start: number, offset: number): void {
    let k = 0;
    const tick = () => {
      if (this.stopped) return;
      const due = start + k * FRAME_MS;
      const now = performance.now();
      this.lateness.push(now - due);
      const index = (offset + k) % this.loop.frames;
      const at = index * FRAME_SAMPLES;
      this.ws.send(this.loop.pcm.subarray(at, at + FRAME_SAMPLES));
      const end = this.loop.speechEnds.get(index);
      // In real time, a frame leaves once its last sample is captured: the phrase ended that much earlier.
      if (end !== undefined) this.lastEnd = now - ((FRAME_SAMPLES - end) / INPUT_SAMPLE_RATE) * 1000;
      k += 1;
      this.timer = setTimeout(tick, Math.max(0, start + k * FRAME_MS - performance.now()));
    };
    this.timer = setTimeout(tick, Math.max(0, start - performance.now()));
  }

  stop(): void {
    this.stopped = true;
    if (this.timer) clearTimeout(this.timer);
    this.ws.terminate();
  }
}

function loadSeconds(n: number, loop: Loop): number {
  const secondsPerPhrase = loop.pcm.length / INPUT_SAMPLE_RATE / PHRASES.length;
  return Math.max(LOAD_SECONDS, Math.ceil((MIN_UTTERANCES * secondsPerPhrase) / n));
}


/** The runtime's memory after full collections (its 'memory' answer). */
interface Memory {
  rss: number;
  heap: number;
  heapTotalMiB: number;
}

/** The runtime's figures over the window as it stood at its end ('stop'), summed up once its replies have arrived ('measure'). */
interface Measure {
  /** Mean per stage over the window, from the runtime's kohami_voice_stage_seconds. */
  stagesMs: Record<string, number>;
  /** p99 per stage over the window. */
  stagesP99Ms: Record<string, number>;
  firstAudioSamples: number[];
  speculations: Record<string, number>;
  /** The runtime's own end of speech → first reply-audio frame sent, less the fakes' latencies. */
  afterEndpointP50Ms: number;
  afterEndpointP99Ms: number;
  sessions: number;
  frames: number;
  analysisP50Ms: number;
  analysisP99Ms: number;
  lagP50Ms: number;
  lagP99Ms: number;
  loopP99Ms: number;
  gcP99Ms: number;
  gcMaxMs: number;
  gcByKind: Record<string, { count: number; ms: number; maxMs: number }>;
  gcMsPerSecond: number;
  cpuPct: number;
  sileroPerSecond: number;
}

interface Result {
  variant: string;
  n: number;
  m: Measure & Memory;
  /**
   * At the kiosk: the end-of-turn decision (vad speech_stopped) → the first reply-audio frame. The fakes'
   * latencies are in it only where the turn waited for them (a speculation that had its transcript and
   * first sentence ready waits for neither). The wait before the decision is the decision's own (short
   * after a closed sentence, long after an open one): the senior's, not the runtime's, and left out.
   */
  afterEndpoint: number[];
  /** The slowest answered utterances, split at the kiosk: [speech stopped → first audio, speech stopped → final transcript, final → first audio] ms. */
  slowest: number[][];
  utterances: number;
  answered: number;
  fluxes: Record<string, number>;
  lateP99: number;
  /** This process's CPU over the window: the kiosks' share of the two cores. */
  generatorCpuPct: number;
  /** The fakes' CPU over the window (% of one core). */
  fakesCpuPct: number;
  /** This process's event-loop delay p99 / max (ms): a stalled generator delays what the kiosks see. */
  generatorLoop: [number, number];
  rssPerSessionKiB: number;
  heapPerSessionKiB: number;
  held: boolean;
  /** The machine's 1-minute load average before and after the run (2 cores; other work shows here). */
  load?: [number, number];
}

const afterEndpointOf = (u: Utterance) => u.firstAudioAt! - u.stoppedAt!;

/** The fakes process's CPU time so far (µs). */
async function fakesCpu(): Promise<number> {
  const { user, system } = await ask<{ user: number; system: number }>(fakes, 'cpu');
  return user + system;
}

async function run(variant: 'gated' | 'silero', n: number, loop: Loop, fakesUrl: string): Promise<Result> {
  const child = fork(new URL('./voice-server.ts', import.meta.url), [variant, String(n + 1)], {
    execArgv: [
      '--expose-gc',
      ...(process.env.BENCH_PROF ? ['--cpu-prof', `--cpu-prof-dir=${process.env.BENCH_PROF}`] : []),
      // e.g. BENCH_NODE_ARGS=--trace-gc: V8 flags NODE_OPTIONS refuses, for the runtime process only.
      ...(process.env.BENCH_NODE_ARGS?.split(' ').filter(Boolean) ?? []),
    ],
    env: { ...process.env, MISTRAL_BASE_URL: fakesUrl, ENDPOINT_SILENCE_MS: String(ENDPOINT_SILENCE_MS) },
    stdio: 'inherit',
  });
  // A runtime that dies (a crash at start-up, say) fails the run instead of leaving it waiting under the bench lock.
  const exited = once(child, 'exit').then(([code]) => Promise.reject(new Error(`voice-server exited with code ${String(code)}`)));
  const answer = <T>(type: string) => Promise.race([ask<T>(child, type), exited]);
  try {
    const { url } = await answer<{ url: string }>('ready');
    // Shared models (Silero, the WebRTC VAD, the SDKs) loaded by one session that then leaves: the base.
    const warm = await PacedKiosk.open(url, n + 1, loop);
    warm.stream(performance.now(), 0);
    await new Promise((r) => setTimeout(r, 3000));
    warm.stop();
    await new Promise((r) => setTimeout(r, 500));
    const base = await answer<Memory>('memory');

    const kiosks: PacedKiosk[] = [];
    for (let i = 0; i < n; i += 50) {
      kiosks.push(...(await Promise.all(Array.from({ length: Math.min(50, n - i) }, (_, j) => PacedKiosk.open(url, i + j + 1, loop)))));
    }
    // Staggered within a frame, each from its own place in the loop: phrases do not all end together.
    const start = performance.now() + 100;
    kiosks.forEach((k, i) => k.stream(start + (i / n) * FRAME_MS, Math.floor(Math.random() * loop.frames)));
    await new Promise((r) => setTimeout(r, WARMUP_SECONDS * 1000));
    await answer('reset');
    const from = performance.now();
    const generatorCpu = process.cpuUsage();
    const fakesCpuFrom = await fakesCpu();
    for (const k of kiosks) k.lateness.length = 0;
    const generatorLoop = monitorEventLoopDelay({ resolution: 5 });
    generatorLoop.enable();
    await new Promise((r) => setTimeout(r, loadSeconds(n, loop) * 1000));
    generatorLoop.disable();
    const to = performance.now();
    const generatorUsed = process.cpuUsage(generatorCpu);
    const fakesUsed = (await fakesCpu()) - fakesCpuFrom;
    await answer('stop');
    // Replies to phrases that ended inside the window get a few seconds to arrive. The runtime's figures and its
    // memory are read after them, the sessions still open: summing up ~10⁵ samples and three full collections
    // stall the runtime for 100–300 ms, and done at the window's end they made the replies then in flight the
    // slowest of the run.
    await new Promise((r) => setTimeout(r, 3000));
    const m = { ...(await answer<Measure>('measure')), ...(await answer<Memory>('memory')) };
    for (const k of kiosks) k.stop();

    const measured = kiosks.flatMap((k) => k.utterances).filter((u) => u.endAt >= from && u.endAt < to);
    const answered = measured.filter((u) => u.firstAudioAt !== undefined);
    const fluxes: Record<string, number> = {};
    for (const u of measured) fluxes[u.flux ?? 'none'] = (fluxes[u.flux ?? 'none'] ?? 0) + 1;
    const lateP99 = percentile(kiosks.flatMap((k) => k.lateness), 99);
    return {
      variant,
      n,
      m,
      afterEndpoint: answered.map(afterEndpointOf),
      slowest: answered
        .map((u) => [afterEndpointOf(u), u.finalAt! - u.stoppedAt!, u.firstAudioAt! - u.finalAt!])
        .sort((a, b) => b[0]! - a[0]!)
        .slice(0, 3),
      utterances: measured.length,
      answered: answered.length,
      fluxes,
      lateP99,
      generatorCpuPct: ((generatorUsed.user + generatorUsed.system) / 1000 / (to - from)) * 100,
      fakesCpuPct: (fakesUsed / 1000 / (to - from)) * 100,
      generatorLoop: [generatorLoop.percentile(99) / 1e6, generatorLoop.max / 1e6],
      rssPerSessionKiB: (m.rss - base.rss) / n / 1024,
      heapPerSessionKiB: (m.heap - base.heap) / n / 1024,
      held: m.lagP99Ms <= HELD_LAG_MS,
    };
  } finally {
    // SIGTERM lets a profiled child write its profile.
    child.kill(process.env.BENCH_PROF ? 'SIGTERM' : 'SIGKILL');
    await exited.catch(() => undefined);
  }
}

const loop = await buildLoop();
// Advanced serialization: the loop's audio goes to the recognizer fake, which finds each kiosk's audio in it.
const fakes = fork(new URL('./voice-fakes.ts', import.meta.url), [String(FAKE_STT_MS), String(FAKE_TTS_MS), ...TRANSCRIPTS], { execArgv: [], stdio: 'inherit', serialization: 'advanced' });
stopWithFakes(fakes);
const { baseUrl } = await ask<{ baseUrl: string }>(fakes, 'ready');
fakes.send({ type: 'loop', pcm: loop.pcm, phrases: loop.phrases });

const results: Result[] = [];
const variants = (process.env.BENCH_VARIANTS ?? 'gated,silero').split(',') as Array<'gated' | 'silero'>;
try {
  // Variants alternate at each size, so that the machine's drift (other work on its two cores) hits both alike.
  for (const n of SIZES) {
    const atSize: Result[] = [];
    for (const variant of variants) {
      const load = loadavg()[0]!;
      const r = await run(variant, n, loop, baseUrl);
      r.load = [load, loadavg()[0]!];
      atSize.push(r);
      process.stderr.write(`${variant} N=${n}: frame lag p99 ${r.m.lagP99Ms.toFixed(1)} ms (event loop p99 ${r.m.loopP99Ms.toFixed(1)} ms), speech_stopped → first audio p99 ${percentile(r.afterEndpoint, 99).toFixed(0)} ms, ${r.answered}/${r.utterances} answered\n`);
    }
    results.push(...atSize);
    // Once no variant holds a size, larger ones only get worse.
    if (atSize.every((r) => !r.held)) break;
  }
} finally {
  fakes.kill('SIGTERM');
}

/** Least-squares slope of RSS over N: what one more voice session costs, the load's fixed growth set apart. */
function marginalKiB(variant: string, pick: (r: Result) => number): number {
  const rs = results.filter((r) => r.variant === variant);
  if (rs.length < 2) return NaN;
  const mx = rs.reduce((a, r) => a + r.n, 0) / rs.length;
  const my = rs.reduce((a, r) => a + pick(r) * r.n, 0) / rs.length;
  const num = rs.reduce((a, r) => a + (r.n - mx) * (pick(r) * r.n - my), 0);
  const den = rs.reduce((a, r) => a + (r.n - mx) ** 2, 0);
  return num / den;
}

const f = (x: number, d = 1) => (Number.isFinite(x) ? x.toFixed(d) : '–');
console.log(`\nbench:voice — ${LOAD_SECONDS} s per size (longer for small sizes: ≥ ${MIN_UTTERANCES} phrases each) after ${WARMUP_SECONDS} s warm-up, loopback, node ${process.version}; ${(loop.speechShare * 100).toFixed(0)} % speech; fakes: STT final ${FAKE_STT_MS} ms after flush, TTS first byte ${FAKE_TTS_MS} ms; ENDPOINT_SILENCE_MS ${ENDPOINT_SILENCE_MS}\n`);
console.log('| VAD | N | frame lag behind real time p50 / p99 ms | of which analysis p50 / p99 ms | event loop delay p99 ms | GC pause p99 / max ms (GC ms/s) | held (lag p99 ≤ 20 ms) | runtime CPU % | Silero windows/s per session | speech_stopped → first audio p50 / p99 ms | answered | RSS / JS heap KiB per voice session | generator late p99 ms / CPU % | load avg before → after |');
console.log('|---|---:|---:|---:|---:|---:|:-:|---:|---:|---:|---:|---:|---:|---:|');
for (const r of results) {
  console.log(
    `| ${r.variant === 'gated' ? 'WebRTC gate → Silero' : 'Silero alone'} | ${r.n} | ${f(r.m.lagP50Ms)} / ${f(r.m.lagP99Ms)} | ${f(r.m.analysisP50Ms, 2)} / ${f(r.m.analysisP99Ms, 2)} | ${f(r.m.loopP99Ms)} | ${f(r.m.gcP99Ms)} / ${f(r.m.gcMaxMs)} (${f(r.m.gcMsPerSecond, 0)}) | ${r.held ? 'yes' : '**no**'} | ${f(r.m.cpuPct, 0)} | ${f(r.m.sileroPerSecond / r.n)} | ${f(percentile(r.afterEndpoint, 50), 0)} / ${f(percentile(r.afterEndpoint, 99), 0)} | ${r.answered}/${r.utterances} | ${f(r.rssPerSessionKiB, 0)} / ${f(r.heapPerSessionKiB, 0)} | ${f(r.lateP99)} / ${f(r.generatorCpuPct, 0)} | ${f(r.load![0])} → ${f(r.load![1])} |`,
  );
}
for (const v of variants) {
  console.log(`\nmarginal cost of one more voice session (${v}, slope over the sizes): RSS ${f(marginalKiB(v, (r) => r.rssPerSessionKiB), 0)} KiB, JS heap + external ${f(marginalKiB(v, (r) => r.heapPerSessionKiB), 0)} KiB`);
}
console.log('\nThe runtime\'s own stage timings (kohami_voice_stage_seconds, mean / p99 ms over the window; transcription includes the fake\'s ' + FAKE_STT_MS + ' ms, first_audio its ' + FAKE_TTS_MS + ' ms):\n');
console.log('| VAD | N | endpointing | transcription | first_token | first_audio |');
console.log('|---|---:|---:|---:|---:|---:|');
for (const r of results) {
  const stage = (name: string) => `${f(r.m.stagesMs[name] ?? NaN, 0)} / ${f(r.m.stagesP99Ms[name] ?? NaN, 0)}`;
  console.log(`| ${r.variant} | ${r.n} | ${stage('endpointing')} | ${stage('transcription')} | ${stage('first_token')} | ${stage('first_audio')} |`);
}
// A turn whose first sentence was not synthesized ahead waits the fake's TTS latency at least: below it, the speculation's speech was adopted.
console.log('\nThe preemptive turn: speculations committed / aborted (the run), and transcript → first reply-audio frame sent (first_audio) on the turns whose speech was ready (below the fake\'s ' + FAKE_TTS_MS + ' ms): the runtime\'s own time after the end-of-turn decision\n');
console.log('| VAD | N | committed / aborted | turns with speech ready | their first_audio p50 / p99 ms |');
console.log('|---|---:|---:|---:|---:|');
for (const r of results) {
  const ready = r.m.firstAudioSamples.filter((ms) => ms < FAKE_TTS_MS);
  console.log(`| ${r.variant} | ${r.n} | ${r.m.speculations.committed ?? 0} / ${r.m.speculations.aborted ?? 0} | ${ready.length} of ${r.m.firstAudioSamples.length} | ${f(percentile(ready, 50), 1)} / ${f(percentile(ready, 99), 1)} |`);
}
const fluxes = results.find((r) => r.variant === 'gated')?.fluxes ?? {};
console.log(`\nreplies by flux (gated, first size): ${Object.entries(fluxes).map(([k, v]) => `${k} ${v}`).join(', ')}`);
console.log('speech_stopped → first audio = vad speech_stopped at the kiosk (the end-of-turn decision) → the first reply-audio frame there: the fakes\' ' + FAKE_STT_MS + ' + ' + FAKE_TTS_MS + ' ms are in it only where the turn waited for them (not when the preemptive turn had its transcript and first sentence ready)');
for (const r of results) {
  const kinds = Object.entries(r.m.gcByKind).map(([kind, k]) => `${kind} ${k.count}× ${f(k.ms, 0)} ms (max ${f(k.maxMs)})`);
  console.log(`GC (${r.variant}, N=${r.n}, heap ${f(r.m.heapTotalMiB, 0)} MiB): ${kinds.join(', ')}`);
}
for (const r of results) {
  const split = r.slowest.map(([o, t, a]) => `${f(o!, 0)} (stopped → final ${f(t!, 0)}, final → first audio ${f(a!, 0)})`);
  console.log(`slowest replies (${r.variant}, N=${r.n}), speech_stopped → first audio ms at the kiosk: ${split.join('; ')}`);
  console.log(`  after the endpoint as the runtime saw it (its transcription + first_audio stages; the fakes' latencies where it waited for them) p50 / p99 ${f(r.m.afterEndpointP50Ms, 0)} / ${f(r.m.afterEndpointP99Ms, 0)} ms; generator event-loop delay p99 / max ${f(r.generatorLoop[0])} / ${f(r.generatorLoop[1])} ms; CPU % of a core: runtime ${f(r.m.cpuPct, 0)} (${f(r.m.cpuPct / r.n, 2)} per session), fakes ${f(r.fakesCpuPct, 0)}, generator ${f(r.generatorCpuPct, 0)}`);
}
console.log('targets: the runtime\'s own time after the end-of-turn decision p99 ≤ 10 ms when the speculative turn\'s speech is ready (first_audio above); ≥ 100 concurrent voice sessions held; ≤ 1 MiB (1024 KiB) per voice session\n');
const gated = results.filter((r) => r.variant === 'gated');
const largest = gated.filter((r) => r.held).at(-1);
// At the largest size held, else the smallest measured (the figure is the adoption path's, not the load's).
const shown = largest ?? gated[0];
const ready = shown?.m.firstAudioSamples.filter((ms) => ms < FAKE_TTS_MS) ?? [];
console.log(`voice: after the decision p99 ${f(percentile(ready, 99), 1)} ms at ${shown?.n ?? 0} sessions, ${largest?.n ?? 0} sessions held`);
process.exit(0);
