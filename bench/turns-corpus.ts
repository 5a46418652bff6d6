import { execFileSync } from 'node:child_process';
import { createHash } from 'node:crypto';
import { existsSync, mkdirSync, readdirSync, readFileSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { hasSox, pcmOf, RECORDING_RATE, RECORDING_SUFFIX, recordingOf, soxDecode, STAMPS, type Recording } from '../adapters/voice/french-recordings.ts';

/**
 * The speech of bench:turns: Debian's `tuxpaint-stamps-default` (adapters/voice/french-recordings.ts),
 * every French description recorded. Decoded to 16 kHz mono s16 with sox, cached under the system's
 * temp directory (never in the repository), composed deterministically (seeded) into the bench's utterances.
 */
export const RATE = RECORDING_RATE;
const CACHE = path.join(tmpdir(), 'kohami-bench-turns');
/** 10 ms analysis frames. */
const FRAME = RATE / 100;
/** A gap between two words: this many 10 ms frames at least GAP_DB below the clip's loudest. */
const GAP_DB = Number(process.env.GAP_DB ?? 25);
const GAP_FRAMES = Number(process.env.GAP_FRAMES ?? 3);

/** Words after which a French sentence is unfinished: conjunctions, prepositions, determiners, hesitations. */
export const UNFINISHED_CUES = new Set(
  'et mais ou donc car de du des à au aux en pour par avec sans sur sous dans chez vers le la les un une son sa ses mon ma mes ce cette qui que dont euh'.split(' '),
);

/** One clip per stamp. */
export type Clip = Recording;

/** Speech whose text and voiced extent are known. */
export interface Speech {
  pcm: Int16Array;
  text: string;
  /** The voiced extent within `pcm` (samples). */
  start: number;
  end: number;
}

/** Installs the recordings and sox when missing (as root), else says how and exits 1. */
export function ensureData(): void {
  const missing = [
    ...(existsSync(STAMPS) ? [] : ['tuxpaint-stamps-default']),
    ...(hasSox() ? [] : ['sox']),
  ];
  if (missing.length === 0) return;
  const command = `apt-get install -y ${missing.join(' ')}`;
  if (process.getuid?.() !== 0) {
    console.error(`bench:turns needs ${missing.join(' and ')}: run as root\n  ${command}`);
    process.exit(1);
  }
  console.error(`bench:turns: installing ${missing.join(', ')} (${command})`);
  execFileSync('apt-get', ['install', '-y', '-qq', ...missing], { stdio: 'inherit', env: { ...process.env, DEBIAN_FRONTEND: 'noninteractive' } });
}

/** Every clip with its text, sorted by stamp (the order does not depend on the file system). */
export function listClips(): Clip[] {
  const clips: Clip[] = [];
  const walk = (dir: string) => {
    for (const name of readdirSync(dir)) {
      const full = path.join(dir, name);
      if (statSync(full).isDirectory()) walk(full);
      else if (name.endsWith(RECORDING_SUFFIX)) {
        const clip = recordingOf(path.relative(STAMPS, full.slice(0, -RECORDING_SUFFIX.length)));
        if (clip) clips.push(clip);
      }
    }
  };
  walk(STAMPS);
  return clips.sort((a, b) => (a.stamp < b.stamp ? -1 : 1));
}

/** The clip at 16 kHz mono s16, `tempo` applied (sox keeps the pitch), cached. */
export function decode(clip: Clip, tempo = 1): Int16Array {
  mkdirSync(CACHE, { recursive: true });
  const key = createHash('sha1').update(`${clip.ogg}:${tempo}`).digest('hex').slice(0, 16);
  const raw = path.join(CACHE, `${key}.raw`);
  if (!existsSync(raw)) writeFileSync(raw, soxDecode(clip.ogg, tempo));
  return pcmOf(readFileSync(raw));
}

/** Pink noise from sox (`synth pinknoise`), `seconds` long, at `gain` of full scale, seeded. */
export function pinkNoise(seconds: number, gain: number): Int16Array {
  mkdirSync(CACHE, { recursive: true });
  const raw = path.join(CACHE, `pink-${seconds}-${gain}.raw`);
  if (!existsSync(raw)) {
    execFileSync('sox', ['-R', '-n', '-r', String(RATE), '-c', '1', '-b', '16', '-e', 'signed-integer', '-t', 'raw', raw, 'synth', String(seconds), 'pinknoise', 'vol', String(gain)]);
  }
  return pcmOf(readFileSync(raw));
}

/** RMS level (dB full scale) of each 10 ms frame. */
function levels(pcm: Int16Array): number[] {
  const out: number[] = [];
  for (let at = 0; at + FRAME <= pcm.length; at += FRAME) {
    let sum = 0;
    for (let i = at; i < at + FRAME; i++) sum += pcm[i]! * pcm[i]!;
    out.push(10 * Math.log10(sum / FRAME / 32768 ** 2 + 1e-12));
  }
  return out;
}

/** The voiced extent of a clip: its frames within 35 dB of its loudest (the room's floor lies lower). */
export function voiced(pcm: Int16Array, text: string): Speech {
  const db = levels(pcm);
  const peak = Math.max(...db);
  const loud = db.map((d) => d > peak - 35);
  const first = loud.indexOf(true);
  const last = loud.lastIndexOf(true);
  return { pcm, text, start: Math.max(0, first) * FRAME, end: (last + 1) * FRAME };
}

/** A 10 ms frame is speech within this many dB of the clip's loudest (its room's floor lies lower). */
const SPEECH_DB = 25;
/** Quieter stretches at least this many frames long are pauses; shorter ones are inside a word. */
const INNER_PAUSE_FRAMES = 6;

/**
 * The stretches of a speech's extent where someone speaks (sample ranges): frames within SPEECH_DB of
 * the clip's loudest, joined across dips shorter than INNER_PAUSE_FRAMES. The recognizer fake places
 * the words along them, so no word is said in a pause or in the room's noise before the first one.
 */
export function voicedSpans(speech: Speech): Array<[number, number]> {
  const db = levels(speech.pcm);
  const peak = Math.max(...db);
  const spans: Array<[number, number]> = [];
  for (let f = speech.start / FRAME; f < speech.end / FRAME; f++) {
    if (db[f]! < peak - SPEECH_DB) continue;
    const last = spans.at(-1);
    if (last && f * FRAME - last[1] < INNER_PAUSE_FRAMES * FRAME) last[1] = (f + 1) * FRAME;
    else spans.push([f * FRAME, (f + 1) * FRAME]);
  }
  // A click alone (under 30 ms) is not a word.
  const words = spans.filter(([from, to]) => to - from >= 3 * FRAME);
  return words.length > 0 ? words : [[speech.start, speech.end]];
}

/**
 * A split of the clip right after an unfinished cue word («  de », « et », « un » …), at a real gap in its
 * audio: a stretch of ≥ 40 ms at least 30 dB below the clip's loudest, within 150 ms of where the word
 * should end (its character offset over the voiced extent). Null when the clip has no such cue or gap.
 */
export function splitAtCue(speech: Speech): { first: Speech; rest: Speech } | null {
  const words = speech.text.split(' ');
  const db = levels(speech.pcm);
  const peak = Math.max(...db);
  const chars = speech.text.length;
  for (let i = words.length - 3; i >= 1; i--) {
    if (!UNFINISHED_CUES.has(words[i]!.toLowerCase())) continue;
    const endChar = words.slice(0, i + 1).join(' ').length;
    const guess = speech.start + ((speech.end - speech.start) * endChar) / chars;
    const from = Math.max(speech.start / FRAME + 5, Math.floor((guess - 0.15 * RATE) / FRAME));
    const to = Math.min(speech.end / FRAME - 5, Math.ceil((guess + 0.15 * RATE) / FRAME));
    let best: [number, number] | null = null;
    for (let f = from; f < to; ) {
      if (db[f]! < peak - GAP_DB) {
        let g = f;
        while (g < to && db[g]! < peak - GAP_DB) g++;
        if (g - f >= GAP_FRAMES && (!best || g - f > best[1] - best[0])) best = [f, g];
        f = g;
      } else f++;
    }
    if (!best) continue;
    const cut = ((best[0] + best[1]) >> 1) * FRAME;
    return {
      first: { pcm: speech.pcm, text: words.slice(0, i + 1).join(' '), start: speech.start, end: best[0] * FRAME },
      rest: { pcm: speech.pcm, text: words.slice(i + 1).join(' '), start: Math.max(cut, best[1] * FRAME), end: speech.end },
    };
  }
  return null;
}

/** A seeded pseudo-random generator (mulberry32). */
export function seeded(seed: number): () => number {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

/**
 * Tuning or held-out, by a seeded hash of the stamp's description: the same stamp always lands in the
 * same part, and so do stamps that share a description (and a recording).
 */
export function partOf(description: string, seed: number): 'tuning' | 'held-out' {
  return createHash('sha1').update(`${seed}:${description}`).digest()[0]! < 128 ? 'tuning' : 'held-out';
}
