/**
 * Plays a reply's audio frames as they arrive: a small jitter buffer before the first sample, then each
 * frame scheduled right after the previous one as an AudioBufferSourceNode. It knows how much of the
 * turn has actually come out of the speaker (from each frame's sample offset and the audio clock), which
 * the runtime needs to keep only what the senior heard when the reply is cut. A pause (the runtime heard
 * speech with no word over the reply: a cough, the television) suspends the playback context, so every
 * scheduled frame and the audio clock stop where they are and go on from there on resume; frames that
 * arrive meanwhile are buffered (scheduled after the others), and what was played does not advance.
 */
const JITTER_MS = 120;
/** After an underrun, playback resumes this far ahead of the audio clock. */
const LEAD_S = 0.03;

export class ReplyPlayer {
  /** @param {AudioContext} ctx @param {{ onDone(turnId: string): void, onChange(): void }} events */
  constructor(ctx, events) {
    this.ctx = ctx;
    this.events = events;
    this.turn = null;
    this.cleared = new Set();
    /** The turn whose playback is paused (the context is suspended), or null. */
    this.pausedTurn = null;
  }

  /** The turn whose audio is buffered or playing, or null. */
  get turnId() {
    return this.turn ? this.turn.turnId : null;
  }

  get liveSources() {
    return this.turn ? this.turn.sources.size : 0;
  }

  begin(turnId, sampleRate) {
    if (this.turn) this.stop();
    this.unpause();
    this.cleared.delete(turnId);
    this.turn = { turnId, sampleRate, queue: [], queuedSamples: 0, started: false, ended: false, nextTime: 0, segments: [], sources: new Set() };
    this.events.onChange();
  }

  /** One binary frame of the turn: `pcm` is Float32 at the turn's rate, starting at `sampleOffset`. */
  push(turnId, sampleOffset, pcm) {
    const t = this.turn;
    if (!t || t.turnId !== turnId || this.cleared.has(turnId)) return;
    if (t.started) return this.schedule(sampleOffset, pcm);
    t.queue.push({ sampleOffset, pcm });
    t.queuedSamples += pcm.length;
    if ((t.queuedSamples / t.sampleRate) * 1000 >= JITTER_MS) this.startPlaying();
  }

  /** The runtime sent all of the turn's audio. */
  end(turnId) {
    const t = this.turn;
    if (!t || t.turnId !== turnId) return;
    t.ended = true;
    if (!t.started) this.startPlaying();
    this.checkDone();
  }

  /** Stops the turn's audio now (reply.audio.clear, or the interrupt button); later frames of it are dropped. */
  clear(turnId) {
    this.cleared.add(turnId);
    if (this.turn && this.turn.turnId === turnId) this.stop();
  }

  /** reply.audio.pause: the speaker goes quiet now, keeping its place in the turn's audio. */
  pause(turnId) {
    if (!this.turn || this.turn.turnId !== turnId || this.pausedTurn === turnId) return;
    this.pausedTurn = turnId;
    void this.ctx.suspend();
    this.events.onChange();
  }

  /** reply.audio.resume: the turn plays on from where it stopped. */
  resume(turnId) {
    if (this.pausedTurn !== turnId) return;
    this.unpause();
    this.events.onChange();
  }

  unpause() {
    if (this.pausedTurn === null) return;
    this.pausedTurn = null;
    void this.ctx.resume();
  }

  /** Milliseconds of the current turn that have come out of the speaker (frozen while paused). */
  playedMs() {
    const t = this.turn;
    if (!t) return 0;
    const now = this.ctx.currentTime;
    let samples = 0;
    for (const s of t.segments) {
      if (s.start > now) break;
      samples = s.offset + Math.round((Math.min(now, s.end) - s.start) * t.sampleRate);
    }
    return Math.round((samples / t.sampleRate) * 1000);
  }

  /** Called on the progress tick: reports the end of the turn once its last sample has played. */
  checkDone() {
    const t = this.turn;
    if (!t || !t.ended || !t.started || t.queue.length > 0) return;
    const last = t.segments[t.segments.length - 1];
    if (last && this.ctx.currentTime < last.end) return;
    this.turn = null;
    this.unpause();
    this.events.onDone(t.turnId);
    this.events.onChange();
  }

  startPlaying() {
    const t = this.turn;
    t.started = true;
    t.nextTime = this.ctx.currentTime + LEAD_S;
    for (const { sampleOffset, pcm } of t.queue.splice(0)) this.schedule(sampleOffset, pcm);
    this.events.onChange();
  }

  schedule(sampleOffset, pcm) {
    const t = this.turn;
    if (pcm.length === 0) return;
    if (t.nextTime < this.ctx.currentTime) t.nextTime = this.ctx.currentTime + LEAD_S;
    const buffer = this.ctx.createBuffer(1, pcm.length, t.sampleRate);
    buffer.copyToChannel(pcm, 0);
    const source = this.ctx.createBufferSource();
    source.buffer = buffer;
    source.connect(this.ctx.destination);
    source.start(t.nextTime);
    const end = t.nextTime + pcm.length / t.sampleRate;
    t.segments.push({ start: t.nextTime, end, offset: sampleOffset });
    t.sources.add(source);
    source.onended = () => {
      t.sources.delete(source);
      if (this.turn === t) this.checkDone();
    };
    t.nextTime = end;
  }

  stop() {
    const t = this.turn;
    this.turn = null;
    this.unpause();
    for (const source of t.sources) {
      source.onended = null;
      source.stop();
      source.disconnect();
    }
    t.sources.clear();
    this.events.onChange();
  }
}
