import { SincResampler } from '../machines/voice/sinc-resampler.js';
import { BoxBaseline, LinearBaseline } from './support/resample-baselines.ts';
import { percentile } from './support/stats.ts';
import { docComment, exitOnHelp } from '../runtime/cli/usage.ts';

exitOnHelp(() => docComment(import.meta.url));

/**
 * bench:resample — the shared windowed-sinc resampler (machines/voice/sinc-resampler.js) against the
 * two it replaced, in the same run: the server's linear interpolation and the kiosk worklet's box
 * filter. For each rate pair voice mode meets: CPU per second of audio (streamed in the chunks its
 * caller feeds: 20 ms on the server, 128-frame render quanta in the worklet), and what a tone comes
 * out at (in floats, below the s16 floor): 10 kHz (above 16 kHz's Nyquist: should be gone), 7 kHz
 * (the pass band's edge at 16 kHz: should be whole), scaled to the lower rate for the other pairs;
 * upsampling has no tone above the input's Nyquist, so there the first figure is the error of the
 * pass-band-edge tone against the ideal one (its image at from − f, and the ripple).
 *   npm run bench:resample [-- SECONDS]
 */
const SECONDS = Number(process.argv[2] ?? 20);
/** Rounds per resampler, alternated so that the machine's load hits all alike; the median is kept. */
const ROUNDS = 5;

type Pair = { from: number; to: number; where: 'server' | 'worklet'; chunk: number };
const PAIRS: Pair[] = [
  { from: 24_000, to: 16_000, where: 'server', chunk: 480 },
  { from: 22_050, to: 16_000, where: 'server', chunk: 441 },
  { from: 22_050, to: 24_000, where: 'server', chunk: 441 },
  { from: 24_000, to: 48_000, where: 'server', chunk: 480 },
  { from: 48_000, to: 16_000, where: 'worklet', chunk: 128 },
  { from: 44_100, to: 16_000, where: 'worklet', chunk: 128 },
];

type Push = (input: Float64Array) => number;
type Make = (from: number, to: number) => Push;

function sinc(from: number, to: number): Push {
  const core = new SincResampler(from, to);
  let output = new Float64Array(0);
  return (input) => {
    const room = core.maxOutput(input.length);
    if (output.length < room) output = new Float64Array(room);
    last = output;
    return core.process(input, output);
  };
}
/** The sinc resampler's output buffer after the latest push (level measurement reads it). */
let last: Float64Array = new Float64Array(0);

const RESAMPLERS: Record<string, Make> = {
  sinc,
  linear: (from, to) => {
    const r = new LinearBaseline(from, to);
    return (input) => (last = r.push(input)).length;
  },
  box: (from, to) => {
    const r = new BoxBaseline(from, to);
    return (input) => (last = r.push(input)).length;
  },
};

const tone = (rate: number, hz: number, seconds: number) => Float64Array.from({ length: Math.round(rate * seconds) }, (_, i) => Math.sin((2 * Math.PI * hz * i) / rate));

/**
 * A tone's level after resampling, in dB (its first and last 50 ms, the filters' transients, left
 * out); `error`: the level of what differs from the ideal tone at the new rate instead (images, ripple).
 */
function level(make: Make, pair: Pair, hz: number, error = false): number {
  const push = make(pair.from, pair.to);
  const input = tone(pair.from, hz, 1);
  const out: number[] = [];
  for (let at = 0; at < input.length; at += pair.chunk) {
    const n = push(input.subarray(at, at + pair.chunk));
    for (let i = 0; i < n; i++) out.push(last[i]!);
  }
  const edge = Math.round(pair.to * 0.05);
  let sum = 0;
  const ideal = (i: number) => (error ? Math.sin((2 * Math.PI * hz * i) / pair.to) : 0);
  for (let i = edge; i < out.length - edge; i++) sum += (out[i]! - ideal(i)) ** 2;
  return 10 * Math.log10(sum / (out.length - 2 * edge) / 0.5);
}

/** CPU milliseconds per second of audio, streaming SECONDS of a speech-band signal. */
function cpu(make: Make, pair: Pair, input: Float64Array): number {
  const push = make(pair.from, pair.to);
  const started = process.cpuUsage();
  for (let at = 0; at < input.length; at += pair.chunk) push(input.subarray(at, at + pair.chunk));
  const used = process.cpuUsage(started);
  return (used.user + used.system) / 1000 / SECONDS;
}

const fmtDb = (db: number) => (db < -140 ? '< −140' : db.toFixed(1));
console.log(`bench:resample: ${SECONDS} s of audio per run, ${ROUNDS} runs each (median), Node ${process.versions.node}, load ${(await import('node:os')).loadavg()[0]!.toFixed(1)}`);
console.log('| pair | where | resampler | CPU ms / s of audio | × baseline | 10 kHz tone dB (up: 7 kHz error dB) | 7 kHz tone dB |');
console.log('|---|---|---|---:|---:|---:|---:|');
const summary: string[] = [];
for (const pair of PAIRS) {
  const names = ['sinc', pair.where === 'server' ? 'linear' : 'box'];
  // Two tones of the speech band, far from the rates' harmonics: what each resampler really streams.
  const input = tone(pair.from, 180, SECONDS).map((x, i) => 0.5 * x + 0.3 * Math.sin((2 * Math.PI * 2_300 * i) / pair.from));
  for (const name of names) cpu(RESAMPLERS[name]!, pair, input.subarray(0, pair.from)); // warm-up
  const runs: Record<string, number[]> = Object.fromEntries(names.map((n) => [n, []]));
  for (let round = 0; round < ROUNDS; round++) for (const name of names) runs[name]!.push(cpu(RESAMPLERS[name]!, pair, input));
  const lower = Math.min(pair.from, pair.to);
  const [stop, pass] = [10_000, 7_000].map((hz) => (hz * lower) / 16_000);
  const medians = Object.fromEntries(names.map((n) => [n, percentile(runs[n]!, 50)]));
  for (const name of names) {
    const ratio = medians[name]! / medians[names[1]!]!;
    console.log(`| ${pair.from} → ${pair.to} | ${pair.where} | ${name} | ${medians[name]!.toFixed(3)} | ${ratio.toFixed(2)} | ${fmtDb(pair.to > pair.from ? level(RESAMPLERS[name]!, pair, pass!, true) : level(RESAMPLERS[name]!, pair, stop!))} | ${level(RESAMPLERS[name]!, pair, pass!).toFixed(3)} |`);
  }
  summary.push(`${pair.from}→${pair.to} ${(medians.sinc! / medians[names[1]!]!).toFixed(2)}×`);
}
console.log(`\nresample: sinc CPU vs the old resampler ${summary.join(', ')}; targets: 10 kHz ≤ −80 dB, 7 kHz within 0.1 dB`);
