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
 * Lines every session says identically (SOS, neutral), rendered once per process and voice and
 * shared: a hundred sessions hold one copy. One per process; RAM only, like everything here.
 */
export class SharedLines {
  private readonly lines = new Map<string, Int16Array[]>();

  get(voiceId: string, text: string): Int16Array[] | undefined {
    return this.lines.get(`${voiceId}\n${text}`);
  }

  set(voiceId: string, text: string, pcm: Int16Array[]): void {
    this.lines.set(`${voiceId}\n${text}`, pcm);
  }
}

export interface LineCacheOptions {
  /**
   * The speaker whose voice the lines have, at its rate: Mistral's (not the fallback speaker, whose
   * espeak renders would then be shared as if they were Mistral's), or espeak offline.
   */
  speaker: SpeakerPort;
  /** Offline speaker (espeak-ng) that renders the `always` lines when `speaker` cannot. */
  lastResort: SpeakerPort;
  lines: SessionLines;
  shared: SharedLines;
  /** Bound on one line's synthesis. Default 5,000 ms. */
  lineTimeoutMs?: number;
  /** Bound on the whole warm-up. Default 20,000 ms. */
  warmupMs?: number;
}

/**
 * Per session, pre-synthesized lines in RAM (never on disk): played with no synthesis wait, and
 * the SOS audio even when the speech service is down. `warm()` runs in the background at session
 * start; `get()` answers what is ready.
 */
export class LineCache {
  private readonly mine = new Map<string, Int16Array[]>();
  private readonly lifetime = new AbortController();
  private readonly lineTimeoutMs: number;
  private readonly warmupMs: number;

  constructor(private readonly options: LineCacheOptions) {
    this.lineTimeoutMs = options.lineTimeoutMs ?? 5_000;
    this.warmupMs = options.warmupMs ?? 20_000;
  }

  /** The line's audio at the speaker's rate, or undefined when it is not (yet) rendered. */
  get(text: string): Int16Array[] | undefined {
    return this.mine.get(text) ?? this.options.shared.get(this.options.speaker.voiceId, text);
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
      if (this.get(text)) continue;
      const pcm = await render(speaker, text, AbortSignal.any([budget, AbortSignal.timeout(this.lineTimeoutMs)]));
      if (pcm) {
        if (kind === 'personal') this.mine.set(text, pcm);
        else shared.set(speaker.voiceId, text, pcm);
      } else if (kind === 'always' && !this.lifetime.signal.aborted) {
        // The last resort is local: it gets its own bound, not what is left of the warm-up's.
        const offline = await render(this.options.lastResort, text, AbortSignal.any([this.lifetime.signal, AbortSignal.timeout(this.lineTimeoutMs)]));
        if (offline) this.mine.set(text, [resample(concat(offline), this.options.lastResort.sampleRate, speaker.sampleRate)]);
      }
    }
  }

  /** Stops the warm-up and lets the audio go. */
  close(): void {
    this.lifetime.abort();
    this.mine.clear();
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
  const out = new Int16Array(chunks.reduce((n, c) => n + c.length, 0));
  let at = 0;
  for (const chunk of chunks) {
    out.set(chunk, at);
    at += chunk.length;
  }
  return out;
}
