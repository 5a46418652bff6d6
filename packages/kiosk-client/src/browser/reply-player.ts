/**
 * Plays a reply's audio through a bounded jitter buffer: nothing plays before `prebufferMs` is buffered
 * (or the turn's audio has all come), then frames are scheduled back to back as AudioBufferSourceNodes,
 * never more than `horizonMs` ahead of the audio clock (what is not yet scheduled waits in the queue, at
 * most `maxBufferMs`, beyond which frames are dropped and reported). When the audio runs dry before the
 * turn's end (frames late from the network or the speech service) it is an underrun, reported; playback
 * waits for `rebufferMs` again and goes on, so a late frame costs a short silence, not a stutter.
 *
 * It knows how much of the turn has come out of the speaker (each frame's sample offset against the
 * audio clock): what `playback.progress` and an interrupt's `playedMs` say, and which sentence marks
 * (`reply.audio.mark`) have been heard. A pause (`reply.audio.pause`) suspends the playback context, so
 * every scheduled frame and the audio clock stop where they are and go on from there on resume; frames
 * that arrive meanwhile are buffered, and what was played does not advance.
 */

export interface JitterBufferSettings {
  /** Buffered before the first sample plays (ms). */
  prebufferMs: number;
  /** Buffered again after an underrun before playback goes on (ms). */
  rebufferMs: number;
  /** Scheduled ahead of the audio clock at most (ms): a clear or a pause has little to undo. */
  horizonMs: number;
  /** Waiting in the queue at most (ms of audio); more is dropped (`overflow`). */
  maxBufferMs: number;
}

export const JITTER_BUFFER: JitterBufferSettings = { prebufferMs: 120, rebufferMs: 80, horizonMs: 600, maxBufferMs: 120_000 };

/** The first frame after a start or an underrun plays this far ahead of the audio clock. */
const LEAD_S = 0.03;
/** Cleared turns remembered (their late frames are dropped); a session clears one turn at a time. */
const CLEARED_KEPT = 16;

export interface ReplyPlayerEvents {
  /** The turn's last sample has played (send `playback.done`). */
  done(turnId: string): void;
  /** Which turn plays or is paused changed. */
  change(): void;
  /** The audio ran dry before the turn's end (`count`: this turn's underruns so far). */
  underrun?(turnId: string, count: number): void;
  /** Playback passed a sentence mark: the senior has heard the reply's text up to `textOffset`. */
  mark?(turnId: string, textOffset: number): void;
  /** A frame was dropped: the queue held `maxBufferMs` already. */
  overflow?(turnId: string): void;
}

interface Segment {
  start: number;
  end: number;
  offset: number;
  length: number;
}

interface Turn {
  turnId: string;
  sampleRate: number;
  queue: Array<{ offset: number; pcm: Float32Array }>;
  queuedSamples: number;
  /** The sample offset the next frame should start at (frames behind it are late duplicates). */
  nextOffset: number;
  started: boolean;
  /** Waiting for the prebuffer (before the start) or the rebuffer (after an underrun). */
  buffering: boolean;
  ended: boolean;
  nextTime: number;
  /** Scheduled, not yet wholly played, in time order. */
  segments: Segment[];
  /** Samples wholly played (up to the end of the last segment passed). */
  played: number;
  sources: Set<AudioBufferSourceNode>;
  marks: Array<{ sampleOffset: number; textOffset: number }>;
  underruns: number;
  overflowed: boolean;
}

export class ReplyPlayer {
  private readonly ctx: AudioContext;
  private readonly events: ReplyPlayerEvents;
  private readonly settings: JitterBufferSettings;
  private turn: Turn | null = null;
  private readonly cleared: string[] = [];
  private paused: string | null = null;

  constructor(ctx: AudioContext, events: ReplyPlayerEvents, settings: Partial<JitterBufferSettings> = {}) {
    this.ctx = ctx;
    this.events = events;
    this.settings = { ...JITTER_BUFFER, ...settings };
  }

  /** The turn whose audio is buffered or playing, or null. */
  get turnId(): string | null {
    return this.turn ? this.turn.turnId : null;
  }

  /** The turn whose playback is paused (the context is suspended), or null. */
  get pausedTurn(): string | null {
    return this.paused;
  }

  /** The current turn's underruns so far. */
  get underruns(): number {
    return this.turn ? this.turn.underruns : 0;
  }

  /** Audio nodes scheduled and not yet ended (bounded by the horizon). */
  get liveSources(): number {
    return this.turn ? this.turn.sources.size : 0;
  }

  /** Audio held for the current turn, scheduled or queued (ms). */
  bufferedMs(): number {
    const t = this.turn;
    if (!t) return 0;
    const ahead = Math.max(0, t.nextTime - this.ctx.currentTime) * 1000;
    return Math.round(ahead + (t.queuedSamples / t.sampleRate) * 1000);
  }

  begin(turnId: string, sampleRate: number): void {
    if (this.turn) this.stop();
    this.unpause();
    const i = this.cleared.indexOf(turnId);
    if (i >= 0) this.cleared.splice(i, 1);
    this.turn = {
      turnId, sampleRate, queue: [], queuedSamples: 0, nextOffset: 0, started: false, buffering: true, ended: false,
      nextTime: 0, segments: [], played: 0, sources: new Set(), marks: [], underruns: 0, overflowed: false,
    };
    this.events.change();
  }

  /** One frame of the turn: `pcm` is Float32 at the turn's rate, starting at `sampleOffset`. */
  push(turnId: string, sampleOffset: number, pcm: Float32Array): void {
    const t = this.turn;
    if (!t || t.turnId !== turnId || this.cleared.includes(turnId) || pcm.length === 0) return;
    // A frame (or part of one) already given: dropped, so the audio never plays twice.
    const skip = t.nextOffset - sampleOffset;
    if (skip >= pcm.length) return;
    const fresh = skip > 0 ? pcm.subarray(skip) : pcm;
    const offset = Math.max(sampleOffset, t.nextOffset);
    if (((t.queuedSamples + fresh.length) / t.sampleRate) * 1000 > this.settings.maxBufferMs) {
      if (!t.overflowed) this.events.overflow?.(turnId);
      t.overflowed = true;
      return;
    }
    t.nextOffset = offset + fresh.length;
    t.queue.push({ offset, pcm: fresh });
    t.queuedSamples += fresh.length;
    this.pump();
  }

  /** `reply.audio.mark`: once playback passes `sampleOffset`, the text up to `textOffset` has been heard. */
  mark(turnId: string, sampleOffset: number, textOffset: number): void {
    const t = this.turn;
    if (!t || t.turnId !== turnId) return;
    t.marks.push({ sampleOffset, textOffset });
    this.progress();
  }

  /** The runtime sent all of the turn's audio. */
  end(turnId: string): void {
    const t = this.turn;
    if (!t || t.turnId !== turnId) return;
    t.ended = true;
    this.pump();
  }

  /** Stops the turn's audio now (reply.audio.clear, or an interrupt); later frames of it are dropped. */
  clear(turnId: string): void {
    this.cleared.push(turnId);
    if (this.cleared.length > CLEARED_KEPT) this.cleared.shift();
    if (this.turn && this.turn.turnId === turnId) this.stop();
  }

  /** reply.audio.pause: the speaker goes quiet now, keeping its place in the turn's audio. */
  pause(turnId: string): void {
    if (!this.turn || this.turn.turnId !== turnId || this.paused === turnId) return;
    this.paused = turnId;
    void this.ctx.suspend();
    this.events.change();
  }

  /** reply.audio.resume: the turn plays on from where it stopped. */
  resume(turnId: string): void {
    if (this.paused !== turnId) return;
    this.unpause();
    this.events.change();
  }

  /** Milliseconds of the current turn that have come out of the speaker (frozen while paused). */
  playedMs(): number {
    const t = this.turn;
    return t ? Math.round((this.playedSamples(t) / t.sampleRate) * 1000) : 0;
  }

  /** The progress tick: marks passed, more audio scheduled, the turn's end noticed. */
  progress(): void {
    const t = this.turn;
    if (!t) return;
    const samples = this.playedSamples(t);
    while (t.marks.length > 0 && t.marks[0]!.sampleOffset <= samples) this.events.mark?.(t.turnId, t.marks.shift()!.textOffset);
    this.pump();
  }

  /** Stops what plays and forgets the turn (a new turn, a disconnect). */
  stop(): void {
    const t = this.turn;
    if (!t) return;
    this.turn = null;
    this.unpause();
    for (const source of t.sources) {
      source.onended = null;
      source.stop();
      source.disconnect();
    }
    t.sources.clear();
    this.events.change();
  }

  private unpause(): void {
    if (this.paused === null) return;
    this.paused = null;
    void this.ctx.resume();
  }

  private playedSamples(t: Turn): number {
    const now = this.ctx.currentTime;
    while (t.segments.length > 0 && t.segments[0]!.end <= now) {
      const s = t.segments.shift()!;
      t.played = s.offset + s.length;
    }
    const s = t.segments[0];
    if (s && s.start < now) return s.offset + Math.min(s.length, Math.round((now - s.start) * t.sampleRate));
    return t.played;
  }

  private pump(): void {
    const t = this.turn;
    if (!t || this.paused !== null) return;
    const now = this.ctx.currentTime;
    if (t.buffering) {
      const needMs = t.started ? this.settings.rebufferMs : this.settings.prebufferMs;
      if (!t.ended && (t.queuedSamples / t.sampleRate) * 1000 < needMs) return;
      t.buffering = false;
      t.started = true;
      t.nextTime = Math.max(t.nextTime, now + LEAD_S);
      this.events.change();
    }
    const horizon = now + this.settings.horizonMs / 1000;
    while (t.queue.length > 0 && t.nextTime < horizon) this.schedule(t, t.queue.shift()!);
    this.checkDone(t);
  }

  private schedule(t: Turn, frame: { offset: number; pcm: Float32Array }): void {
    t.queuedSamples -= frame.pcm.length;
    if (t.nextTime < this.ctx.currentTime) t.nextTime = this.ctx.currentTime + LEAD_S;
    const buffer = this.ctx.createBuffer(1, frame.pcm.length, t.sampleRate);
    buffer.copyToChannel(frame.pcm as Float32Array<ArrayBuffer>, 0);
    const source = this.ctx.createBufferSource();
    source.buffer = buffer;
    source.connect(this.ctx.destination);
    source.start(t.nextTime);
    const end = t.nextTime + frame.pcm.length / t.sampleRate;
    t.segments.push({ start: t.nextTime, end, offset: frame.offset, length: frame.pcm.length });
    t.sources.add(source);
    source.onended = () => {
      t.sources.delete(source);
      if (this.turn !== t) return;
      // Each frame's end: the marks it passed are heard now, not at the next progress tick.
      this.progress();
      if (t.sources.size === 0 && t.queue.length === 0 && !t.ended && !t.buffering) {
        // Dry before the turn's end: wait for a little audio again rather than play each frame as it trickles in.
        t.buffering = true;
        t.underruns += 1;
        this.events.underrun?.(t.turnId, t.underruns);
      }
    };
    t.nextTime = end;
  }

  private checkDone(t: Turn): void {
    if (!t.ended || !t.started || t.buffering || t.queue.length > 0 || t.sources.size > 0) return;
    this.playedSamples(t);
    for (const m of t.marks.splice(0)) this.events.mark?.(t.turnId, m.textOffset);
    this.turn = null;
    this.unpause();
    this.events.done(t.turnId);
    this.events.change();
  }
}
