import { loadavg } from 'node:os';
import { EspeakSpeaker } from '../adapters/voice/espeak-speaker.ts';
import { findPicoLingware, PICO_LINGWARE_DIR } from '../adapters/voice/pico-lingware.ts';
import { PicoSpeaker } from '../adapters/voice/pico-speaker.ts';
import type { SpeakerPort } from '../machines/voice/voice.port.ts';
import { exitOnHelp } from '../runtime/cli/usage.ts';
import { percentile } from './support/stats.ts';

/**
 * bench:offline-voice — SVOX Pico's French voice against espeak-ng's (the baseline), the two offline
 * voices of docs/voice.md#the-offline-voice, each in its WASM worker as the runtime runs it: the time
 * to a sentence's first audio (what a senior waits for, offline or when Voxtral fails), the synthesis
 * time per second of audio, and the resident memory a voice's first sentence adds (its worker and
 * module loading). Sentences are the runtime's own lines and reply-like ones, the two voices
 * alternated sentence by sentence so that the machine's load hits both alike.
 *   npm run bench:offline-voice [-- ROUNDS]
 */
const USAGE = 'usage: npm run bench:offline-voice [-- ROUNDS]   (ROUNDS: rounds of the eight sentences per voice, default 10)';
exitOnHelp(USAGE);
const ROUNDS = Number(process.argv[2] ?? 10);
if (!Number.isInteger(ROUNDS) || ROUNDS < 1) {
  console.error(`bench:offline-voice: ROUNDS must be a positive whole number, not "${process.argv[2]}"\n${USAGE}`);
  process.exit(2);
}
const SENTENCES = [
  'Bien sûr, je vous écoute.',
  'Bonjour Marie, ravi de vous revoir.',
  'Je vous écoute avec attention. Racontez-m’en un peu plus ?',
  'Le marché du samedi est un vrai plaisir.',
  'On y trouve des fruits, des fromages et des fleurs de saison.',
  'Votre fille a dû aimer cette promenade avec vous.',
  'Je suis toujours là. Prenez votre temps, je vous écoute.',
  'Il est dix heures et demie, et il fait beau aujourd’hui.',
];

const lingware = findPicoLingware(PICO_LINGWARE_DIR);
if (!lingware) {
  console.error(`bench:offline-voice needs SVOX Pico's lingware in ${PICO_LINGWARE_DIR}: install libttspico-data (docs/voice.md#the-offline-voice)`);
  process.exit(1);
}
const voices: Record<string, SpeakerPort> = { 'SVOX Pico': new PicoSpeaker({ lingware }), 'espeak-ng': new EspeakSpeaker() };

/** One sentence: ms to its first chunk and to its end, and its audio's duration in seconds. */
async function speak(speaker: SpeakerPort, text: string): Promise<{ firstMs: number; totalMs: number; seconds: number }> {
  const started = performance.now();
  let firstMs = NaN;
  let samples = 0;
  for await (const chunk of speaker.synthesize(text, new AbortController().signal)) {
    if (samples === 0) firstMs = performance.now() - started;
    samples += chunk.length;
  }
  return { firstMs, totalMs: performance.now() - started, seconds: samples / speaker.sampleRate };
}

console.log(`bench:offline-voice: ${SENTENCES.length} sentences × ${ROUNDS} rounds per voice, Node ${process.versions.node}, load ${loadavg()[0]!.toFixed(1)}`);
const cold: Record<string, { firstMs: number; rssMb: number }> = {};
for (const [name, speaker] of Object.entries(voices)) {
  const rss = process.memoryUsage().rss;
  const first = await speak(speaker, SENTENCES[0]!);
  cold[name] = { firstMs: first.firstMs, rssMb: (process.memoryUsage().rss - rss) / 2 ** 20 };
}
const firsts: Record<string, number[]> = Object.fromEntries(Object.keys(voices).map((n) => [n, []]));
const perSecond: Record<string, number[]> = Object.fromEntries(Object.keys(voices).map((n) => [n, []]));
for (let round = 0; round < ROUNDS; round++) {
  for (const text of SENTENCES) {
    for (const [name, speaker] of Object.entries(voices)) {
      const run = await speak(speaker, text);
      firsts[name]!.push(run.firstMs);
      perSecond[name]!.push(run.totalMs / run.seconds);
    }
  }
}
const baseline = 'espeak-ng';
const p50 = (name: string) => percentile(firsts[name]!, 50);
console.log('| voice | first sentence, cold: first audio ms | RSS added MB | first audio p50 ms | p95 ms | × espeak-ng (p50) | synthesis ms per s of audio (p50) | × espeak-ng |');
console.log('|---|---:|---:|---:|---:|---:|---:|---:|');
for (const name of Object.keys(voices)) {
  const synth = percentile(perSecond[name]!, 50);
  console.log(
    `| ${name} | ${cold[name]!.firstMs.toFixed(0)} | ${cold[name]!.rssMb.toFixed(1)} | ${p50(name).toFixed(1)} | ${percentile(firsts[name]!, 95).toFixed(1)} | ${(p50(name) / p50(baseline)).toFixed(2)} | ${synth.toFixed(1)} | ${(synth / percentile(perSecond[baseline]!, 50)).toFixed(2)} |`,
  );
}
console.log(
  `\noffline-voice: SVOX Pico's first audio ${(p50('SVOX Pico') / p50(baseline)).toFixed(2)}× espeak-ng's (p50), cold ${(cold['SVOX Pico']!.firstMs / cold[baseline]!.firstMs).toFixed(2)}×; targets: warm p95 well under the fallback speaker's 1.5 s bound, cold (once a process, at the first voice session's line warm-up) about espeak-ng's`,
);
