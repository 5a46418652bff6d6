import type { SpeakerPort } from '../../machines/voice/voice.port.ts';
import type { SeniorProfile } from '../../machines/ports.ts';
import { CacheFluxAdapter, type CacheVariations } from '../cache-flux.adapter.ts';
import { NEUTRAL_REPLY } from '../memory-flux.adapter.ts';
import { resample } from './resample.ts';

/** The lines a session may speak with no synthesis wait. `always` must exist even when the speech service is down. */
export interface SessionLines {
  always: string[];
  shared: string[];
  personal: string[];
}

/**
 * The SOS lines (always), the neutral reply (the same for every session) and the CacheFlux replies
 * as this senior will hear them. The replies come from a CacheFluxAdapter of their own, cycled through
 * every variation, so the text matches what the session's CacheFlux says to the character.
 */
export function sessionLines(variations: CacheVariations, profile: SeniorProfile): SessionLines {
  const flux = new CacheFluxAdapter(variations);
  const personal = new Set<string>();
  for (let i = 0; i < variations.greeting.length; i++) {
    const line = flux.resolve('bonjour', profile);
    if (line) personal.add(line);
  }
  return { always: [flux.sosFallback(), flux.sosAfterPartial()], shared: [NEUTRAL_REPLY], personal: [...personal] };
}

/**
 * The process's copy of every pre-synthesized line, one per voice, rate and text, whichever sessions
 * speak it: the SOS and neutral lines are kept for the process's life (every session needs them, and
 * the speech service is asked for them once); a personal line (a greeting with the senior's name) is
 * held by the sessions whose senior hears it and goes with the last of them. RAM only, like everything here.
 */
export class SharedLines {
  private readonly common = new Map<string, Int16Array>();
  /** Common lines being rendered: sessions warming up together wait for one request instead of each sending its own. */
  private readonly rendering = new Map<string, Promise<Int16Array | undefined>>();
  private readonly personal = new Map<string, { pcm: Int16Array; holders: number }>();

  /** A common line. */
  get(key: string): Int16Array | undefined {
    return this.common.get(key);
  }

  /**
   * A common line: kept, or rendered by `render` and kept when it succeeds. A render already under
   * way for the key (another session's) is awaited instead; if it fails, or its session goes mid-way,
   * the callers get undefined and the next warm-up asks again.
   */
  render(key: string, render: () => Promise<Int16Array | undefined>): Promise<Int16Array | undefined> {
    const kept = this.common.get(key);
    if (kept) return Promise.resolve(kept);
    let pending = this.rendering.get(key);
    if (!pending) {
      pending = render()
        .then((pcm) => {
          if (pcm) this.common.set(key, pcm);
          return pcm;
        })
        .finally(() => this.rendering.delete(key));
      this.rendering.set(key, pending);
    }
    return pending;
  }

  /** A personal line already held by another session, now also by the caller; or `pcm`, held by the caller alone. */
  hold(key: string, pcm?: Int16Array): Int16Array | undefined {
    const line = this.personal.get(key);
    if (line) {
      line.holders += 1;
      return line.pcm;
    }
    if (pcm) this.personal.set(key, { pcm, holders: 1 });
    return pcm;
  }

  held(key: string): Int16Array | undefined {
    return this.personal.get(key)?.pcm;
  }

  release(key: string): void {
    const line = this.personal.get(key);
    if (line && --line.holders === 0) this.personal.delete(key);
  }
}

export interface LineCacheOptions {
  /**
   * The speaker whose voice the lines have: Mistral's (not the fallback speaker, whose espeak renders
   * would then be shared as if they were Mistral's), or espeak offline.
   */
  speaker: SpeakerPort;
  /** Offline speaker (espeak-ng) that renders the `always` lines when `speaker` cannot. */
  lastResort: SpeakerPort;
  lines: SessionLines;
  shared: SharedLines;
  /**
   * The rate the lines are kept and played at: the kiosk's negotiated output rate, so playing one
   * resamples nothing and a 16 kHz kiosk's lines take two thirds of the room. Default: the speaker's.
   */
  sampleRate?: number;
  /** Bound on one line's synthesis. Default 5,000 ms. */
  lineTimeoutMs?: number;
  /** Bound on the whole warm-up. Default 20,000 ms. */
  warmupMs?: number;
}

/**
 * Per session, pre-synthesized lines in RAM (never on disk): played with no synthesis wait, and
 * the SOS audio even when the speech service is down. `warm()` runs in the background at session
 * start; `get()` answers what is ready. Each line is one array at the session's output rate.
 */
export class LineCache {
  /** The SOS lines rendered offline for this session, in espeak's voice (never shared as the speaker's). */
  private readonly mine = new Map<string, Int16Array>();
  /** Keys of the personal lines this session holds in SharedLines. */
  private readonly holding = new Set<string>();
  private readonly lifetime = new AbortController();
  private readonly sampleRate: number;
  private readonly lineTimeoutMs: number;
  private readonly warmupMs: number;

  constructor(private readonly options: LineCacheOptions) {
    this.sampleRate = options.sampleRate ?? options.speaker.sampleRate;
    this.lineTimeoutMs = options.lineTimeoutMs ?? 5_000;
    this.warmupMs = options.warmupMs ?? 20_000;
  }

  /** The line's audio at the cache's rate, or undefined when it is not (yet) rendered. */
  get(text: string): Int16Array[] | undefined {
    const key = this.key(text);
    const pcm = this.mine.get(text) ?? this.options.shared.get(key) ?? (this.holding.has(key) ? this.options.shared.held(key) : undefined);
    return pcm && [pcm];
  }

  /** Renders the lines, SOS first, one at a time; never rejects, settles within `warmupMs`. */
  async warm(): Promise<void> {
    const { lines, speaker, shared } = this.options;
    const budget = AbortSignal.any([this.lifetime.signal, AbortSignal.timeout(this.warmupMs)]);
    const plan: Array<[string, 'always' | 'shared' | 'personal']> = [
      ...lines.always.map((t) => [t, 'always'] as [string, 'always']),
      ...lines.shared.map((t) => [t, 'shared'] as [string, 'shared']),
      ...lines.personal.map((t) => [t, 'personal'] as [string, 'personal']),
    ];
    for (const [text, kind] of plan) {
      if (budget.aborted) break;
      const key = this.key(text);
      if (this.get(text) || (kind === 'personal' && this.take(key))) continue;
      const signal = AbortSignal.any([budget, AbortSignal.timeout(this.lineTimeoutMs)]);
      const rendering = async () => {
        const pcm = await render(speaker, text, signal);
        return pcm && resample(concat(pcm), speaker.sampleRate, this.sampleRate);
      };
      const line = kind === 'personal' ? await rendering() : await shared.render(key, rendering);
      if (this.lifetime.signal.aborted) break;
      if (line) {
        if (kind === 'personal') this.take(key, line);
      } else if (kind === 'always') {
        // The last resort is local: it gets its own bound, not what is left of the warm-up's.
        const offline = await render(this.options.lastResort, text, AbortSignal.any([this.lifetime.signal, AbortSignal.timeout(this.lineTimeoutMs)]));
        if (offline) this.mine.set(text, resample(concat(offline), this.options.lastResort.sampleRate, this.sampleRate));
      }
    }
  }

  /** Stops the warm-up and lets the audio go (a personal line shared with another session stays with it). */
  close(): void {
    this.lifetime.abort();
    this.mine.clear();
    for (const key of this.holding) this.options.shared.release(key);
    this.holding.clear();
  }

  private take(key: string, pcm?: Int16Array): boolean {
    const held = this.options.shared.hold(key, pcm);
    if (held) this.holding.add(key);
    return held !== undefined;
  }

  private key(text: string): string {
    return `${this.options.speaker.voiceId}\n${this.sampleRate}\n${text}`;
  }
}

/** The whole line, or undefined when the speaker failed, was cut short or said nothing. */
async function render(speaker: SpeakerPort, text: string, signal: AbortSignal): Promise<Int16Array[] | undefined> {
  const chunks: Int16Array[] = [];
  try {
    for await (const chunk of speaker.synthesize(text, signal)) chunks.push(chunk);
  } catch {
    return undefined;
  }
  return signal.aborted || chunks.length === 0 ? undefined : chunks;
}

function concat(chunks: Int16Array[]): Int16Array {
  if (chunks.length === 1) return chunks[0]!;
  const out = new Int16Array(chunks.reduce((n, c) => n + c.length, 0));
  let at = 0;
  for (const chunk of chunks) {
    out.set(chunk, at);
    at += chunk.length;
  }
  return out;
}
