import { fork, type ChildProcess } from 'node:child_process';
import { once } from 'node:events';
import { loadavg } from 'node:os';
import WebSocket from 'ws';
import { decodeAudioFrame } from '../runtime/protocol/frame-header.ts';
import type { ScriptedUtterance } from '../test/support/fake-voxtral.ts';
import { SERVICE_BEHAVIOUR_NAMES, type ServiceBehaviour } from '../test/support/service-behaviours.ts';
import { stopWithFakes } from './support/child.ts';
import { percentile } from './support/stats.ts';
import { decode, ensureData, listClips, partOf, pinkNoise, RATE, seeded, splitAtCue, UNFINISHED_CUES, voiced, voicedSpans, type Clip, type Speech } from './turns-corpus.ts';
import { docComment, exitOnHelp } from '../runtime/cli/usage.ts';

exitOnHelp(() => docComment(import.meta.url));

/**
 * bench:turns — turn-taking on real recorded French speech (Debian's tuxpaint-stamps-default, GPL-2).
 * Utterances composed from the recordings stream in real time, in 20 ms frames, from BENCH_LANES
 * kiosks over real sockets in voice mode into the real runtime (its own process), against loopback
 * fakes at realistic speed (the model 300 ms to its first token, the voice 100 ms to its first audio,
 * the recognizer's words 480 ms behind the audio and its final transcript BENCH_STT_MS after a flush).
 * Per utterance: was it cut (a turn committed before its audio ended), end of speech → first reply
 * audio, and the model and speech calls per committed turn. Baseline in the same run: the runtime at
 * its defaults against the same with BENCH_BASELINE's settings (default PREEMPTIVE_TURN=off: the turn's
 * work starts only once the end of turn is confirmed).
 *   npm run bench:turns [-- --behaviour <name>]   (the fakes play one behaviour of test/support/service-behaviours.ts,
 *   e.g. cumulative-final; none: the conforming service. BENCH_CLIPS: clips drawn per part, default all;
 *   BENCH_PART=held-out|tuning|both;
 *   BENCH_LANES=14; BENCH_SEED=1; BENCH_STT_MS=100; BENCH_BASELINE=PREEMPTIVE_TURN=off (settings, comma-separated; none: no baseline run);
 *   BENCH_CURRENT= (settings over the defaults for the first run, for tuning); BENCH_SCALE=1 multiplies
 *   every set's count; BENCH_TRANSCRIPTS=1 prints the first utterances' texts; BENCH_CUTS=1 those of the
 *   utterances the first configuration cut, and of its finished sentences answered after more than 1 s)
 */
const SEED = Number(process.env.BENCH_SEED ?? 1);
const LANES = Number(process.env.BENCH_LANES ?? 14);
const CLIPS = process.env.BENCH_CLIPS ? Number(process.env.BENCH_CLIPS) : Infinity;
const PARTS = (process.env.BENCH_PART ?? 'held-out') === 'both' ? (['tuning', 'held-out'] as const) : ([process.env.BENCH_PART ?? 'held-out'] as Array<'tuning' | 'held-out'>);
const STT_MS = Number(process.env.BENCH_STT_MS ?? 100);
const MODEL_MS = 300;
const VOICE_MS = 100;
/** `A=1,B=2` → { A: '1', B: '2' }: runtime settings for one configuration. */
const settingsOf = (text: string): Record<string, string> => Object.fromEntries(text.split(',').filter(Boolean).map((kv) => kv.split('=', 2) as [string, string]));
const BASELINE = process.env.BENCH_BASELINE ?? 'PREEMPTIVE_TURN=off';
/** `--behaviour <name>`: the transcription behaviour the recognizer fake plays (null: it conforms). */
const BEHAVIOUR = behaviourArg(process.argv.slice(2));
const CURRENT = process.env.BENCH_CURRENT ?? '';
const FRAME_MS = 20;
const FRAME_SAMPLES = (RATE * FRAME_MS) / 1000;
/** Silence before each utterance (more than the runtime's 300 ms pre-roll) and after it (the answer comes in it). */
const LEAD_MS = 600;
const TAIL_MS = 4000;
const BUCKETS: Array<[number, number]> = [[300, 600], [600, 1000], [1000, 1500], [1500, 2000], [2000, 2500]];
/** Per part: utterances of each set (mid-sentence ones spread evenly over the buckets). */
const SCALE = Number(process.env.BENCH_SCALE ?? 1);
const COUNTS = Object.fromEntries(Object.entries({ mid: 50, slow: 25, noise: 25, finished: 30, abandoned: 10 }).map(([k, n]) => [k, Math.max(1, Math.round(n * SCALE))])) as Record<'mid' | 'slow' | 'noise' | 'finished' | 'abandoned', number>;
/** Pink noise this far below the speech's RMS level, over the whole utterance (lead and tail included). */
const NOISE_SNR_DB = 20;

type SetName = 'mid' | 'slow' | 'noise' | 'finished' | 'abandoned';
interface Item {
  part: 'tuning' | 'held-out';
  set: SetName;
  pauseMs: number;
  pcm: Int16Array;
  /** Sample of the end of the utterance's speech (its last part). */
  speechEnd: number;
  script: ScriptedUtterance;
  /** The first part ends on an unfinished cue (« de », « et » …); split: inside one recording. */
  cue: boolean;
  split: boolean;
}

function behaviourArg(args: string[]): ServiceBehaviour | null {
  const at = args.indexOf('--behaviour');
  if (at < 0) return null;
  const name = args[at + 1] as ServiceBehaviour | undefined;
  if (!name || !SERVICE_BEHAVIOUR_NAMES.includes(name)) {
    console.error(`bench:turns --behaviour: one of ${SERVICE_BEHAVIOUR_NAMES.join(', ')}`);
    process.exit(1);
  }
  return name;
}

const ms = (samples: number) => (samples * 1000) / RATE;
const samplesOf = (msValue: number) => Math.round((msValue * RATE) / 1000);
const stripEnd = (text: string) => text.replace(/[\s.!?…:;,]+$/u, '');
const lowerFirst = (text: string) => text.charAt(0).toLowerCase() + text.slice(1);
const endsOnCue = (text: string) => UNFINISHED_CUES.has(stripEnd(text).split(' ').at(-1)!.toLowerCase());

/** Speech laid out from LEAD_MS with the pauses between its parts, then TAIL_MS; its script's times are ms into it. */
function compose(parts: Speech[], pausesMs: number[], noise: Int16Array | null): { pcm: Int16Array; speechEnd: number; script: ScriptedUtterance } {
  const lengths = parts.map((p) => p.end - p.start);
  const total = samplesOf(LEAD_MS) + lengths.reduce((a, b) => a + b, 0) + pausesMs.reduce((a, b) => a + samplesOf(b), 0) + samplesOf(TAIL_MS);
  const frames = Math.ceil(total / FRAME_SAMPLES);
  const pcm = new Int16Array(frames * FRAME_SAMPLES);
  const speech: NonNullable<ScriptedUtterance['speech']> = [];
  let at = samplesOf(LEAD_MS);
  parts.forEach((p, i) => {
    pcm.set(p.pcm.subarray(p.start, p.end), at);
    // The part's voiced stretches, its text on the first: its words are said along them only.
    voicedSpans(p).forEach(([from, to], k) => {
      const startMs = ms(at + from - p.start);
      speech.push({ startMs, endMs: startMs + ms(to - from), ...(k === 0 ? { text: p.text } : {}) });
    });
    at += lengths[i]! + (i < pausesMs.length ? samplesOf(pausesMs[i]!) : 0);
  });
  const speechEnd = samplesOf(LEAD_MS) + lengths.reduce((a, b) => a + b, 0) + pausesMs.slice(0, parts.length - 1).reduce((a, b) => a + samplesOf(b), 0);
  if (noise) {
    let sum = 0;
    let n = 0;
    for (const p of parts) for (let i = p.start; i < p.end; i++, n++) sum += p.pcm[i]! ** 2;
    let noiseSum = 0;
    for (const s of noise) noiseSum += s * s;
    const gain = Math.sqrt(sum / n) / 10 ** (NOISE_SNR_DB / 20) / Math.sqrt(noiseSum / noise.length);
    for (let i = 0; i < pcm.length; i++) pcm[i] = Math.max(-32768, Math.min(32767, Math.round(pcm[i]! + gain * noise[i % noise.length]!)));
  }
  const text = parts.map((p) => p.text).join(' ');
  return { pcm, speechEnd, script: { text, speech } };
}

/** The part's utterances, deterministic for the seed. */
function build(part: 'tuning' | 'held-out', clips: Clip[], noise: Int16Array): { items: Item[]; clipsUsed: number; splits: number } {
  const random = seeded(SEED * 7919 + (part === 'tuning' ? 1 : 2));
  // One sentence per recording (« Un pion. Il ne peut … » has pauses of its own, between its sentences).
  const pool = clips.filter((c) => partOf(c.text, SEED) === part && !/[.!?]\s/.test(c.text)).map((c) => ({ c, r: random() })).sort((a, b) => a.r - b.r).map((x) => x.c).slice(0, CLIPS);
  const used = new Set<string>();
  const speechOf = (clip: Clip, tempo = 1) => {
    used.add(clip.stamp);
    return voiced(decode(clip, tempo), clip.text);
  };
  const finishedClips = pool.filter((c) => /[.?!]$/.test(c.text));
  // Clips that split after an unfinished cue at a real gap: the sentence resumes with its own next words.
  const splits = pool.map((c) => ({ c, s: splitAtCue(voiced(decode(c), c.text)) })).filter((x) => x.s !== null);
  const items: Item[] = [];
  let next = 0;
  const nextClip = () => pool[next++ % pool.length]!;
  let splitNext = 0;
  /** The first part and the rest of one mid-sentence utterance: a split recording if one is left, else two recordings. */
  const halves = (tempo: number): { first: Speech; rest: Speech; split: boolean } => {
    if (splitNext < splits.length) {
      const { c } = splits[splitNext++]!;
      const s = splitAtCue(speechOf(c, tempo));
      if (s) return { first: s.first, rest: s.rest, split: true };
    }
    const a = nextClip();
    const b = nextClip();
    const first = speechOf(a, tempo);
    const rest = speechOf(b, tempo);
    return { first: { ...first, text: stripEnd(first.text) }, rest: { ...rest, text: lowerFirst(rest.text) }, split: false };
  };
  for (const [set, count] of [['mid', COUNTS.mid], ['slow', COUNTS.slow], ['noise', COUNTS.noise]] as const) {
    for (let i = 0; i < count; i++) {
      const [lo, hi] = BUCKETS[i % BUCKETS.length]!;
      const pauseMs = Math.round(lo + random() * (hi - lo));
      const { first, rest, split } = halves(set === 'slow' ? 0.8 : 1);
      const composed = compose([first, rest], [pauseMs], set === 'noise' ? noise : null);
      items.push({ part, set, pauseMs, ...composed, cue: endsOnCue(first.text), split });
    }
  }
  for (let i = 0; i < COUNTS.finished; i++) {
    const clip = finishedClips[i % finishedClips.length]!;
    items.push({ part, set: 'finished', pauseMs: 0, ...compose([speechOf(clip)], [], null), cue: false, split: false });
  }
  for (let i = 0; i < COUNTS.abandoned; i++) {
    const { first, split } = halves(1);
    items.push({ part, set: 'abandoned', pauseMs: 0, ...compose([first], [], null), cue: endsOnCue(first.text), split });
  }
  return { items, clipsUsed: used.size, splits: splits.length };
}

interface Outcome {
  item: Item;
  /** A turn was committed (transcript.final) on an end of speech decided before the utterance's audio ended. */
  cut: boolean;
  /** End of speech → the first reply-audio frame after it (ms), if any came. */
  firstAudioMs: number | undefined;
  finals: number;
  /** The utterance (all have speech) was answered with the SOS line. */
  sos: boolean;
  /**
   * A turn's transcript held the lane's previous utterance and more (a final that repeats the earlier
   * ones); a final of the previous utterance alone that came late is its own turn, not a repetition.
   */
  repeats: boolean;
  /** The turns' transcripts (for BENCH_CUTS). */
  transcripts: string[];
}

/** Text as compared for repetition: words only, lower case. */
const words = (text: string) => text.toLowerCase().replace(/[^\p{L}\p{N}' ]+/gu, ' ').replace(/\s+/g, ' ').trim();

/** One kiosk in voice mode streaming items one after another in real time. */
class Lane {
  private stops: number[] = [];
  private finals: Array<{ at: number; stoppedAt: number; text: string }> = [];
  private sos = false;
  /** The utterance played before, whose words no later turn should repeat. */
  private previous = '';
  private audio: number[] = [];
  private playing = new Set<string>();
  private quiet: (() => void) | null = null;

  readonly ws: WebSocket;
  readonly name: string;

  private constructor(
    ws: WebSocket,
    name: string,
  ) {
    this.ws = ws;
    this.name = name;
    ws.on('message', (raw, isBinary) => {
      const now = performance.now();
      if (isBinary) {
        if (decodeAudioFrame(new Uint8Array(raw as Buffer)).pcm.length > 0) this.audio.push(now);
        return;
      }
      const f = JSON.parse(raw.toString()) as { type: string; state?: string; turnId?: string; text?: string; flux?: string };
      if (f.type === 'vad' && f.state === 'speech_stopped') this.stops.push(now);
      else if (f.type === 'transcript.final') this.finals.push({ at: now, stoppedAt: this.stops.at(-1) ?? -Infinity, text: f.text ?? '' });
      else if (f.type === 'reply.done' && f.flux === 'sos') this.sos = true;
      else if (f.type === 'reply.audio.start') this.playing.add(f.turnId!);
      else if (f.type === 'reply.audio.end' || f.type === 'reply.audio.clear') {
        // This kiosk plays nothing: a reply counts as heard at once.
        if (f.type === 'reply.audio.end') ws.send(JSON.stringify({ type: 'playback.done', turnId: f.turnId }));
        this.playing.delete(f.turnId!);
        if (this.playing.size === 0) this.quiet?.();
      }
    });
  }

  static async open(url: string, i: number): Promise<Lane> {
    const ws = new WebSocket(`${url}?token=kiosk_turns_${i}`);
    await once(ws, 'open');
    ws.send(
      JSON.stringify({
        type: 'session.start',
        mode: 'voice',
        audio: { input: { encoding: 'pcm_s16le', sampleRate: RATE }, output: { accept: [{ encoding: 'pcm_s16le', sampleRate: 16_000 }] }, kiosk: { aec: true } },
      }),
    );
    const [ready] = (await once(ws, 'message')) as [Buffer];
    const frame = JSON.parse(ready.toString()) as { type: string; audio?: { voiceInput: boolean } };
    if (frame.type !== 'session.ready' || !frame.audio?.voiceInput) throw new Error(`no voice session: ${ready.toString()}`);
    return new Lane(ws, `Turns${i}`);
  }

  async play(item: Item): Promise<Outcome> {
    this.stops = [];
    this.finals = [];
    this.audio = [];
    this.sos = false;
    const frames = item.pcm.length / FRAME_SAMPLES;
    const endFrame = Math.floor((item.speechEnd - 1) / FRAME_SAMPLES);
    let speechEndAt = NaN;
    const start = performance.now() + 5;
    for (let k = 0; k < frames; k++) {
      const due = start + (k + 1) * FRAME_MS;
      const wait = due - performance.now();
      if (wait > 0) await new Promise((r) => setTimeout(r, wait));
      this.ws.send(item.pcm.subarray(k * FRAME_SAMPLES, (k + 1) * FRAME_SAMPLES));
      // A frame leaves once its last sample is captured: the speech ended that much earlier.
      if (k === endFrame) speechEndAt = performance.now() - ms((k + 1) * FRAME_SAMPLES - item.speechEnd);
    }
    // A reply still playing is waited for (at most 3 s), so that the next utterance is a new turn.
    if (this.playing.size > 0) {
      await Promise.race([new Promise<void>((r) => (this.quiet = r)), new Promise((r) => setTimeout(r, 3000))]);
      this.quiet = null;
    }
    const firstAudio = this.audio.find((at) => at >= speechEndAt);
    const previous = words(this.previous);
    this.previous = item.script.text;
    return {
      item,
      cut: this.finals.some((f) => f.stoppedAt < speechEndAt),
      firstAudioMs: firstAudio === undefined ? undefined : firstAudio - speechEndAt,
      finals: this.finals.length,
      sos: this.sos,
      repeats: previous !== '' && !words(item.script.text).includes(previous) && this.finals.some((f) => words(f.text).includes(previous) && words(f.text) !== previous),
      transcripts: this.finals.map((f) => f.text),
    };
  }

  close(): void {
    this.ws.terminate();
  }
}

let asked = 0;
/** One request to the fakes process, answered by type and id. */
function request<T>(child: ChildProcess, msg: Record<string, unknown>, type: string): Promise<T> {
  const id = ++asked;
  return new Promise((resolve) => {
    const onMessage = (m: { type: string; id?: number }) => {
      if (m.type !== type || (m.id !== undefined && m.id !== id)) return;
      child.off('message', onMessage);
      resolve(m as T);
    };
    child.on('message', onMessage);
    child.send({ ...msg, id });
  });
}

interface Run {
  label: string;
  sttDelayMs: number;
  outcomes: Outcome[];
  agentCalls: number;
  speechRequests: number;
  unscripted: number;
  seconds: number;
  /** The runtime's speculative turns by outcome (its /metrics). */
  speculations: Record<string, number>;
}


async function runConfig(label: string, settings: Record<string, string>, items: Item[], fakes: ChildProcess, baseUrl: string): Promise<Run> {
  const from = performance.now();
  const server = fork(new URL('./turns-server.ts', import.meta.url), [String(LANES)], {
    execArgv: [],
    env: { ...process.env, MISTRAL_BASE_URL: baseUrl, BENCH_RUNTIME_ENV: JSON.stringify(settings) },
    stdio: 'inherit',
  });
  const exited = once(server, 'exit').then(([code]) => Promise.reject(new Error(`turns-server exited with code ${String(code)}`)));
  try {
    const ready = await Promise.race([new Promise<{ url: string; sttDelayMs: number }>((resolve) => server.once('message', resolve)), exited]);
    const lanes = await Promise.all(Array.from({ length: LANES }, (_, i) => Lane.open(ready.url, i + 1)));
    const before = await request<{ agentCalls: number; speechRequests: number; unscriptedSockets: number }>(fakes, { type: 'counts' }, 'counts');
    const outcomes: Outcome[] = [];
    let next = 0;
    await Promise.race([
      exited,
      Promise.all(
        lanes.map(async (lane) => {
          while (next < items.length) {
            const item = items[next++]!;
            await request(fakes, { type: 'script', lane: lane.name, utterance: item.script, audio: item.pcm }, 'scripted');
            outcomes.push(await lane.play(item));
          }
        }),
      ),
    ]);
    const after = await request<typeof before>(fakes, { type: 'counts' }, 'counts');
    for (const lane of lanes) lane.close();
    const speculations = new Promise<{ counts: Record<string, number> }>((resolve) => server.once('message', resolve));
    server.send({ type: 'speculations' });
    const { counts } = await Promise.race([speculations, exited]);
    return {
      label,
      sttDelayMs: ready.sttDelayMs,
      speculations: counts,
      outcomes,
      agentCalls: after.agentCalls - before.agentCalls,
      speechRequests: after.speechRequests - before.speechRequests,
      unscripted: after.unscriptedSockets - before.unscriptedSockets,
      seconds: (performance.now() - from) / 1000,
    };
  } finally {
    server.kill('SIGKILL');
    await exited.catch(() => undefined);
  }
}

// --- the run ---
ensureData();
const started = performance.now();
const clips = listClips();
const noise = pinkNoise(30, 0.5);
const built = PARTS.map((part) => ({ part, ...build(part, clips, noise) }));
const tuningStamps = clips.filter((c) => partOf(c.text, SEED) === 'tuning').length;
console.log(
  `bench:turns — ${clips.length} recordings of tuxpaint-stamps-default (GPL-2), split by stamp with seed ${SEED} (stamps with the same description, e.g. a chess piece in black and in white, in the same part): ` +
    `tuning ${tuningStamps} stamps, held-out ${clips.length - tuningStamps}; recordings of one sentence only are used`,
);
for (const b of built) {
  const count = (set: SetName) => b.items.filter((i) => i.set === set).length;
  const mids = b.items.filter((i) => i.set !== 'finished' && i.set !== 'abandoned');
  console.log(
    `  ${b.part}: ${b.clipsUsed} recordings used; ${count('mid')} mid-sentence pauses, ${count('slow')} slowed (tempo 0.8), ${count('noise')} with pink noise ${NOISE_SNR_DB} dB below the speech, ` +
      `${count('finished')} finished sentences, ${count('abandoned')} abandoned; mid-sentence first parts split inside a recording ${mids.filter((i) => i.split).length} (${b.splits} splittable), ending on an unfinished cue ${mids.filter((i) => i.cue).length}`,
  );
}
console.log(`  fakes: model ${MODEL_MS} ms to its first token, voice ${VOICE_MS} ms to its first audio, recognizer words STT_STREAMING_DELAY_MS behind the audio (as the runtime asks), final ${STT_MS} ms after a flush; ${LANES} kiosks at once, 20 ms frames in real time; node ${process.version}, load ${loadavg()[0]!.toFixed(1)}`);
if (process.env.BENCH_TRANSCRIPTS) for (const i of built[0]!.items.slice(0, 20)) console.log(`    ${i.set} ${i.pauseMs} ms: ${i.script.speech!.flatMap((s) => s.text ?? []).join(' | ')}`);

// Advanced serialization: each script carries its utterance's audio (an Int16Array) for the recognizer's clock.
const fakes = fork(new URL('./turns-fakes.ts', import.meta.url), [String(STT_MS), String(MODEL_MS), String(VOICE_MS), ...(BEHAVIOUR ? [BEHAVIOUR] : [])], { execArgv: [], stdio: 'inherit', serialization: 'advanced' });
stopWithFakes(fakes);
// Every lane asks the fakes for its script: a listener each while it waits.
fakes.setMaxListeners(LANES + 10);
const { baseUrl } = await new Promise<{ baseUrl: string }>((resolve) => fakes.once('message', resolve));
const runs: Run[] = [];
// Bounded: the whole run stops by itself even if a process hangs.
const guard = setTimeout(() => {
  console.error('bench:turns: over 30 minutes, giving up');
  fakes.kill('SIGKILL');
  process.exit(2);
}, 30 * 60_000);
try {
  const items = built.flatMap((b) => b.items);
  runs.push(await runConfig(CURRENT ? `defaults, ${CURRENT}` : 'runtime defaults', settingsOf(CURRENT), items, fakes, baseUrl));
  if (BASELINE !== 'none') runs.push(await runConfig(BASELINE, { ...settingsOf(CURRENT), ...settingsOf(BASELINE) }, items, fakes, baseUrl));
} finally {
  clearTimeout(guard);
  fakes.kill('SIGKILL');
}

const f0 = (x: number | undefined) => (x === undefined || !Number.isFinite(x) ? '–' : x.toFixed(0));
const pct = (n: number, d: number) => (d === 0 ? '–' : `${((100 * n) / d).toFixed(0)} %`);
const setNames: Record<SetName, string> = { mid: 'mid-sentence pause', slow: 'slowed (tempo 0.8)', noise: 'pink noise', finished: 'finished sentence', abandoned: 'abandoned sentence' };
/** Which service the recognizer fake played, in each table's title. */
const SERVICE = BEHAVIOUR ? `the recognizer fake playing \`${BEHAVIOUR}\`` : 'the conforming recognizer fake';
console.log(`\nShare of mid-sentence pauses cut (a turn committed before the utterance's audio ended), by pause length — ${SERVICE}:\n`);
console.log(`| part | configuration | set | ${BUCKETS.map(([lo, hi]) => `${(lo / 1000).toFixed(1)}–${(hi / 1000).toFixed(1)} s`).join(' | ')} | ≤ 2 s, all sets |`);
console.log(`|---|---:|---|${BUCKETS.map(() => '---:').join('|')}|---:|`);
for (const part of PARTS) {
  for (const run of runs) {
    const mids = run.outcomes.filter((o) => o.item.part === part && ['mid', 'slow', 'noise'].includes(o.item.set));
    const upTo2 = mids.filter((o) => o.item.pauseMs <= 2000);
    for (const set of ['mid', 'slow', 'noise'] as const) {
      const cells = BUCKETS.map(([lo, hi]) => {
        const xs = mids.filter((o) => o.item.set === set && o.item.pauseMs >= lo && o.item.pauseMs < hi);
        return `${pct(xs.filter((o) => o.cut).length, xs.length)} (${xs.length})`;
      });
      console.log(`| ${part} | ${run.label} | ${setNames[set]} | ${cells.join(' | ')} | ${set === 'mid' ? `**${pct(upTo2.filter((o) => o.cut).length, upTo2.length)}** (${upTo2.length})` : ''} |`);
    }
  }
}
console.log(`\nFinished and abandoned sentences (end of speech → first reply-audio frame at the kiosk), SOS lines and repeated transcripts, calls at the fakes per committed turn — ${SERVICE}:\n`);
console.log('| part | configuration | finished p50 / p95 / max ms | answered | abandoned p50 / max ms | answered | SOS / utterances | repeats | committed turns | speculations committed / aborted | model calls / turn | speech requests / turn | wasted calls / turn | run s |');
console.log('|---|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|');
const summary = (run: Run, part: string) => {
  const os = run.outcomes.filter((o) => o.item.part === part);
  const fin = os.filter((o) => o.item.set === 'finished');
  const finMs = fin.flatMap((o) => (o.firstAudioMs === undefined ? [] : [o.firstAudioMs]));
  const ab = os.filter((o) => o.item.set === 'abandoned');
  const abMs = ab.flatMap((o) => (o.firstAudioMs === undefined ? [] : [o.firstAudioMs]));
  const mids = os.filter((o) => ['mid', 'slow', 'noise'].includes(o.item.set) && o.item.pauseMs <= 2000);
  const turns = run.outcomes.reduce((n, o) => n + o.finals, 0);
  const wasted = (Math.max(0, run.agentCalls - turns) + Math.max(0, run.speechRequests - turns)) / turns;
  return { os, fin, finMs, ab, abMs, mids, turns, wasted, sos: os.filter((o) => o.sos).length, repeats: os.filter((o) => o.repeats).length };
};
for (const part of PARTS) {
  for (const run of runs) {
    const s = summary(run, part);
    console.log(
      `| ${part} | ${run.label} | ${f0(percentile(s.finMs, 50))} / ${f0(percentile(s.finMs, 95))} / ${f0(Math.max(...s.finMs))} | ${s.finMs.length}/${s.fin.length} | ${f0(percentile(s.abMs, 50))} / ${f0(Math.max(...s.abMs))} | ${s.abMs.length}/${s.ab.length} | ${s.sos}/${s.os.length} | ${s.repeats} | ${s.turns} | ${run.speculations.committed ?? 0} / ${run.speculations.aborted ?? 0} | ${(run.agentCalls / s.turns).toFixed(2)} | ${(run.speechRequests / s.turns).toFixed(2)} | ${s.wasted.toFixed(2)} | ${run.seconds.toFixed(0)} |`,
    );
  }
}
for (const run of runs) console.log(`${run.label}: recognizer delay ${run.sttDelayMs} ms`);
if (process.env.BENCH_CUTS) {
  for (const o of runs[0]!.outcomes.filter((x) => x.cut)) console.log(`  cut (${runs[0]!.label}): ${o.item.part} ${o.item.set} ${o.item.pauseMs} ms: ${o.item.script.speech!.flatMap((sp) => sp.text ?? []).join(' | ')}`);
  for (const o of runs[0]!.outcomes.filter((x) => x.item.set === 'finished' && (x.firstAudioMs ?? Infinity) > 1000)) console.log(`  slow (${runs[0]!.label}): ${o.item.part} finished ${o.firstAudioMs ?? '–'} ms: ${o.item.script.text}`);
  for (const o of runs[0]!.outcomes.filter((x) => x.sos || x.repeats)) console.log(`  ${o.sos ? 'SOS' : 'repeat'} (${runs[0]!.label}): ${o.item.part} ${o.item.set}: ${o.item.script.text} → ${o.transcripts.map((t) => `« ${t} »`).join(', ')}`);
}
for (const run of runs) if (run.unscripted > 0) console.log(`warning (${run.label}): ${run.unscripted} transcription sockets flushed before their audio told whose they were, so without a script`);
console.log(`\ncommitted turns and calls are counted over both parts of a configuration's run; wasted = (model calls − turns)⁺ + (speech requests − turns)⁺ per turn (one of each per turn is needed: the fake agent's reply is one sentence)`);
console.log(`targets (held-out): ≤ 2 % of mid-sentence pauses up to 2 s cut; finished p50 ≤ 700 ms, p95 ≤ 1,000 ms; abandoned answered within 3 s; ≤ 0.5 wasted model calls per turn; no SOS line, no repeated transcript`);
console.log(`run time ${((performance.now() - started) / 1000).toFixed(0)} s\n`);
const current = runs[0]!;
const part = PARTS.includes('held-out') ? 'held-out' : PARTS[0]!;
const s = summary(current, part);
console.log(
  `turns${BEHAVIOUR ? ` (${BEHAVIOUR})` : ''}: cut ${((100 * s.mids.filter((o) => o.cut).length) / s.mids.length).toFixed(0)} %, complete p50 ${f0(percentile(s.finMs, 50))} ms p95 ${f0(percentile(s.finMs, 95))} ms, abandoned max ${f0(Math.max(...s.abMs))} ms, SOS ${s.sos}/${s.os.length}, repeats ${s.repeats}, wasted ${s.wasted.toFixed(2)} calls/turn`,
);
process.exit(0);
