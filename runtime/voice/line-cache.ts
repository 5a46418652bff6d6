import type { SpeakerPort } from '../../machines/voice/voice.port.ts';
import type { SeniorProfile } from '../../machines/session/ports.ts';
import { CacheFluxAdapter, type CacheVariations } from '../../adapters/fluxes/cache-flux.adapter.ts';
import { NEUTRAL_REPLY } from '../../adapters/fluxes/memory-flux.adapter.ts';
import { resample } from '../../machines/voice/resample.ts';
import { CHECKIN_LINE } from './idle-checkin.ts';

/** The lines a session may speak with no synthesis wait. `always` must exist even when the speech service is down. */
export interface SessionLines {
  always: string[];
  shared: string[];
  personal: string[];
}

/**
 * The SOS lines (always), the neutral reply and, with `checkin`, the idle check-in line (the same for
 * every session), and the CacheFlux replies as this senior will hear them. The replies come from a
 * CacheFluxAdapter of their own, cycled through every variation, so the text matches what the
 * session's CacheFlux says to the character.
 */
export function sessionLines(variations: CacheVariations, profile: SeniorProfile, options: { checkin?: boolean } = {}): SessionLines {
  const flux = new CacheFluxAdapter(variations);
  const personal = new Set<string>();
  for (let i = 0; i < variations.greeting.length; i++) {
    const line = flux.resolve('bonjour', profile);
    if (line) personal.add(line);
  }
  return { always: [flux.sosFallback(), flux.sosAfterPartial()], shared: options.checkin ? [NEUTRAL_REPLY, CHECKIN_LINE] : [NEUTRAL_REPLY], personal: [...personal] };
}

/** After a line speaker fails, how long no session asks it again. Default of SharedLines' `retryMs`. */
export const LINE_RETRY_MS = 30_000;

/**
 * Cap on the personal lines kept (PCM bytes, all seniors, voices and rates together). A greeting is
 * 2–3 s of speech, about 120 KB at 24 kHz, a senior has four: 32 MiB keeps some 60 seniors' greetings.
 * Past it, the lines no live session holds go, least recently used first.
 */
export const PERSONAL_LINES_MAX_BYTES = 32 * 1024 * 1024;

/**
 * The process's copy of every pre-synthesized line, one per voice, rate and text, whichever sessions
 * speak it: the SOS and neutral lines are kept for the process's life (every session needs them, and
 * the speech service is asked for them once); a personal line (a greeting with the senior's name) is
 * kept per senior, voice, rate and text, so a senior's next session speaks it with no new request:
 * held by that senior's live sessions, then kept in an LRU of `maxPersonalBytes` (a held line is
 * never evicted), dropped when the senior is erased (`invalidateSenior`) or the lines of their name
 * change (`claim`). RAM only, like everything here.
 * It also remembers when each voice's speaker last failed: for `retryMs` after a failure no session
 * asks it for a line, so during an outage the sessions waiting for their lines do not each send
 * requests (and each wait out a line's bound) to a service that is down.
 */
export class SharedLines {
  private readonly common = new Map<string, Int16Array>();
  /** Common lines being rendered: sessions warming up together wait for one request instead of each sending its own. */
  private readonly rendering = new Map<string, Promise<Int16Array | undefined>>();
  /** In least recently used order (a line taken moves to the end). */
  private readonly personal = new Map<string, { pcm: Int16Array; holders: number; seniorId: string }>();
  private personalBytes = 0;
  /** Per senior, the personal lines their kept audio was rendered for (their name is in them). */
  private readonly signatures = new Map<string, string>();
  /** Per voice, performance.now() of its speaker's last failure. */
  private readonly failedAt = new Map<string, number>();

  readonly retryMs: number;
  readonly maxPersonalBytes: number;

  constructor(
    retryMs = LINE_RETRY_MS,
    maxPersonalBytes = PERSONAL_LINES_MAX_BYTES,
  ) {
    this.retryMs = retryMs;
    this.maxPersonalBytes = maxPersonalBytes;
  }

  /** The voice's speaker failed less than `retryMs` ago: not worth asking yet. */
  resting(voiceId: string): boolean {
    return performance.now() - (this.failedAt.get(voiceId) ?? -Infinity) < this.retryMs;
  }

  failed(voiceId: string): void {
    this.failedAt.set(voiceId, performance.now());
  }

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

  /**
   * A session of `seniorId` starts with these personal lines: if the senior's kept lines were
   * rendered for other ones (the preferred name changed), they go.
   */
  claim(seniorId: string, personal: readonly string[]): void {
    const signature = personal.join('\n');
    const before = this.signatures.get(seniorId);
    if (before !== undefined && before !== signature) this.invalidateSenior(seniorId);
    this.signatures.set(seniorId, signature);
  }

  /** A personal line already kept (held by another session, or in the LRU), now held by the caller too; or `pcm`, kept and held by the caller alone. */
  hold(key: string, seniorId: string, pcm?: Int16Array): Int16Array | undefined {
    const line = this.personal.get(key);
    if (line) {
      line.holders += 1;
      this.personal.delete(key);
      this.personal.set(key, line);
      return line.pcm;
    }
    if (pcm) {
      this.personal.set(key, { pcm, holders: 1, seniorId });
      this.personalBytes += pcm.byteLength;
      this.evict();
    }
    return pcm;
  }

  held(key: string): Int16Array | undefined {
    return this.personal.get(key)?.pcm;
  }

  /** The caller no longer holds the line: it stays kept, and may be evicted. */
  release(key: string): void {
    const line = this.personal.get(key);
    if (line && line.holders > 0 && --line.holders === 0) this.evict();
  }

  /** The senior's personal lines go, held or not (RGPD erasure; a name change). Returns how many. */
  invalidateSenior(seniorId: string): number {
    let dropped = 0;
    for (const [key, line] of this.personal) {
      if (line.seniorId !== seniorId) continue;
      this.drop(key, line);
      dropped += 1;
    }
    this.signatures.delete(seniorId);
    return dropped;
  }

  /** PCM bytes of the personal lines kept. */
  get personalSize(): number {
    return this.personalBytes;
  }

  /** Least recently used first, the lines no session holds go until the kept ones fit the cap. */
  private evict(): void {
    for (const [key, line] of this.personal) {
      if (this.personalBytes <= this.maxPersonalBytes) return;
      if (line.holders === 0) this.drop(key, line);
    }
  }

  private drop(key: string, line: { pcm: Int16Array }): void {
    this.personal.delete(key);
    this.personalBytes -= line.pcm.byteLength;
  }
}

export interface LineCacheOptions {
  /**
   * The speaker whose voice the lines have: Mistral's (not the fallback speaker, whose offline renders
   * would then be shared as if they were Mistral's), or the offline voice offline.
   */
  speaker: SpeakerPort;
  /**
   * Offline speaker (SVOX Pico or espeak-ng, offline-speaker.ts) that renders the `always` lines when `speaker` cannot: a stand-in
   * for this session only, replaced by the speaker's rendering as soon as it answers again.
   */
  lastResort: SpeakerPort;
  lines: SessionLines;
  shared: SharedLines;
  /** The senior whose personal lines these are: they are kept for their next sessions under this id. */
  seniorId: string;
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
 * While a line is missing or only a stand-in, the warm-up is run again every `retryMs` (SharedLines'),
 * so after an outage the senior hears the speaker's voice again, not two voices for the rest of the day.
 */
export class LineCache {
  /** The SOS lines rendered offline for this session, in the offline voice (never shared as the speaker's). */
  private readonly standIns = new Map<string, Int16Array>();
  /** Keys of the personal lines this session holds in SharedLines. */
  private readonly holding = new Set<string>();
  private readonly lifetime = new AbortController();
  private retry: NodeJS.Timeout | undefined;
  private readonly sampleRate: number;
  private readonly lineTimeoutMs: number;
  private readonly warmupMs: number;

  private readonly options: LineCacheOptions;

  constructor(options: LineCacheOptions) {
    this.options = options;
    this.sampleRate = options.sampleRate ?? options.speaker.sampleRate;
    this.lineTimeoutMs = options.lineTimeoutMs ?? 5_000;
    this.warmupMs = options.warmupMs ?? 20_000;
    options.shared.claim(options.seniorId, options.lines.personal);
  }

  /** The line's audio at the cache's rate, or undefined when it is not (yet) rendered. The speaker's voice before a stand-in. */
  get(text: string): Int16Array[] | undefined {
    const pcm = this.spoken(text) ?? this.standIns.get(text);
    return pcm && [pcm];
  }

  /**
   * Renders the lines, SOS first, one at a time; never rejects, settles within `warmupMs`. A line
   * the speaker could not render is tried again `retryMs` later, until all are in its voice or the
   * session closes.
   */
  async warm(): Promise<void> {
    await this.pass();
    if (this.lifetime.signal.aborted || this.plan().every(([text]) => this.spoken(text))) return;
    this.retry = setTimeout(() => void this.warm(), this.options.shared.retryMs);
    // A session's retries never keep the process alive.
    this.retry.unref();
  }

  /** Stops the warm-up and lets the audio go (a personal line shared with another session stays with it). */
  close(): void {
    this.lifetime.abort();
    clearTimeout(this.retry);
    this.standIns.clear();
    for (const key of this.holding) this.options.shared.release(key);
    this.holding.clear();
  }

  /** One pass over the lines not yet in the speaker's voice; the speaker is not asked while it rests after a failure. */
  private async pass(): Promise<void> {
    const { speaker, shared } = this.options;
    const budget = AbortSignal.any([this.lifetime.signal, AbortSignal.timeout(this.warmupMs)]);
    for (const [text, kind] of this.plan()) {
      if (budget.aborted) break;
      const key = this.key(text, kind);
      if (this.spoken(text) || (kind === 'personal' && this.take(key))) {
        this.standIns.delete(text);
        continue;
      }
      const signal = AbortSignal.any([budget, AbortSignal.timeout(this.lineTimeoutMs)]);
      const rendering = async () => {
        const pcm = await render(speaker, text, signal);
        // Only the session that asked judges the speaker (not those awaiting its request), and not when it closed mid-way.
        if (!pcm && !this.lifetime.signal.aborted) shared.failed(speaker.voiceId);
        return pcm && resample(concat(pcm), speaker.sampleRate, this.sampleRate);
      };
      const line = shared.resting(speaker.voiceId) ? undefined : kind === 'personal' ? await rendering() : await shared.render(key, rendering);
      if (this.lifetime.signal.aborted) break;
      if (line) {
        if (kind === 'personal') this.take(key, line);
        this.standIns.delete(text);
      } else if (kind === 'always' && !this.standIns.has(text)) {
        // The last resort is local: it gets its own bound, not what is left of the warm-up's.
        const offline = await render(this.options.lastResort, text, AbortSignal.any([this.lifetime.signal, AbortSignal.timeout(this.lineTimeoutMs)]));
        if (offline) this.standIns.set(text, resample(concat(offline), this.options.lastResort.sampleRate, this.sampleRate));
      }
    }
  }

  private plan(): Array<[string, 'always' | 'shared' | 'personal']> {
    const { lines } = this.options;
    return [
      ...lines.always.map((t) => [t, 'always'] as [string, 'always']),
      ...lines.shared.map((t) => [t, 'shared'] as [string, 'shared']),
      ...lines.personal.map((t) => [t, 'personal'] as [string, 'personal']),
    ];
  }

  /** The line in the speaker's voice, if this session has it. */
  private spoken(text: string): Int16Array | undefined {
    const personal = this.key(text, 'personal');
    return this.options.shared.get(this.key(text, 'shared')) ?? (this.holding.has(personal) ? this.options.shared.held(personal) : undefined);
  }

  private take(key: string, pcm?: Int16Array): boolean {
    const held = this.options.shared.hold(key, this.options.seniorId, pcm);
    if (held) this.holding.add(key);
    return held !== undefined;
  }

  /** A common line is the process's; a personal one is its senior's (erased with them), even when another senior has the same name. */
  private key(text: string, kind: 'always' | 'shared' | 'personal'): string {
    const line = `${this.options.speaker.voiceId}\n${this.sampleRate}\n${text}`;
    return kind === 'personal' ? `${this.options.seniorId}\n${line}` : line;
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
