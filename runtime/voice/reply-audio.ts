import { heardText, type AudioMark } from '../../machines/voice/barge-in.ts';
import { encodeAudioFrame, encodePacketFrame } from '../protocol/frame-header.ts';
import { SentenceChunker } from '../../machines/voice/sentence-chunker.ts';
import type { OpusCodecPort, OpusEncoderPort, OpusSpeechPacket, SpeakerPort, SpeechPiece } from '../../machines/voice/voice.port.ts';
import { Resampler } from '../../machines/voice/resample.ts';
import type { VoiceLink } from './voice-link.ts';
import { encodedLine, keepEncodedLine } from './line-packets.ts';

/** A pre-synthesized line's audio at the negotiated rate, if the text is one (no text-to-speech wait). */
export type LineLookup = (text: string) => Int16Array[] | undefined;

export interface ReplyAudioOptions {
  turnId: string;
  link: VoiceLink;
  speaker: SpeakerPort;
  lines: LineLookup;
  /** The negotiated reply-audio rate. */
  sampleRate: number;
  /**
   * Opus output (absent: PCM s16le). What the speaker gives as Opus is relayed as is; a pre-synthesized
   * line is encoded once for every session (line-packets.ts); only other PCM (the offline voice, a fallback) is
   * encoded, by an encoder of the reply's own, made when first needed and closed when the reply ends.
   */
  opus?: OpusCodecPort;
  /** First reply-audio frame sent (for the first_audio stage). */
  onFirstAudio(): void;
  /** A sentence could not be synthesized (the senior still has the caption). */
  onSpeechError(err: unknown): void;
}

/** Reply audio leaves in frames of at most this long, so a clear stops it within one frame. */
const FRAME_MS = 100;
/** The packets the reply encodes: 20 ms, as WebRTC sends (the encoder's `frameSamples`). */
const OPUS_PACKET_MS = 20;
/** Above this much unsent data on the socket, synthesis waits for the kiosk to read. */
export const AUDIO_UNREAD_LIMIT = 256 * 1024;
/** A kiosk that reads nothing for this long loses the rest of the turn's audio (its caption stays). */
const STUCK_SOCKET_MS = 10_000;
/** Without a `playback.done`, the audio is deemed over this long after its estimated end. */
const PLAYBACK_SLACK_MS = 500;

/**
 * One turn's spoken reply: the caption stream cut into sentences (the first clause early), one speech
 * request per sentence in order, resampled to the kiosk's rate and sent as binary frames between
 * `reply.audio.start` and `reply.audio.end`, with a `reply.audio.mark` after each sentence. It knows
 * what the kiosk has played, hence what the senior heard. Audio lives only in transit here.
 */
export class ReplyAudio {
  readonly turnId: string;
  private chunker = new SentenceChunker();
  private readonly controller = new AbortController();
  /** The reply's text as the kiosk's captions have it. */
  private text = '';
  private cursor = 0;
  private readonly pieces: Array<{ text: string; end: number }> = [];
  private wake: (() => void) | null = null;
  private finished = false;
  private samplesSent = 0;
  /** Opus: the samples waiting for a whole packet (20 ms), carried across sentences; sent padded at the end or before a packet not encoded here. */
  private readonly pending: Int16Array | null;
  private encoder: OpusEncoderPort | null = null;
  private pendingLength = 0;
  private readonly marks: AudioMark[] = [];
  /** Times on the monotonic clock (`performance.now()`): a wall clock stepping back must not make played time negative. */
  private firstFrameAt: number | null = null;
  private reportedPlayedMs: number | null = null;
  private durationMs: number | null = null;
  private doneAt: number | null = null;
  /** While paused (a false interruption, maybe), when the pause began; and the pauses' total so far. */
  private pausedAt: number | null = null;
  private pausedMs = 0;
  /**
   * Resolves once the last frame (or the cancellation) has happened. It never rejects (callers chain
   * on it without a handler, and an unhandled rejection ends the process): anything thrown while
   * speaking goes to `onSpeechError` and ends the reply, with `reply.audio.end` if audio went out.
   */
  readonly sent: Promise<void>;

  private readonly o: ReplyAudioOptions;

  constructor(o: ReplyAudioOptions) {
    this.o = o;
    this.turnId = o.turnId;
    this.pending = o.opus ? new Int16Array(Math.round((o.sampleRate * OPUS_PACKET_MS) / 1000)) : null;
    this.sent = this.run();
  }

  get cancelled(): boolean {
    return this.controller.signal.aborted;
  }

  /** A caption delta. */
  delta(text: string): void {
    if (this.finished || this.cancelled) return;
    this.text += text;
    // A pre-synthesized line arriving as a delta (the SOS closing line) is spoken whole, from RAM.
    if (this.o.lines(text.trim())) return this.takeLine(text.trim());
    this.enqueue(this.chunker.push(text));
  }

  /** The turn's `reply.done`: a reply that came with no delta (a cached or SOS line) is spoken whole. */
  finish(fullText: string): void {
    if (this.finished || this.cancelled) return;
    if (this.text === '') {
      this.text = fullText;
      if (this.o.lines(fullText.trim())) this.takeLine(fullText.trim());
      else this.enqueue(this.chunker.push(fullText));
    }
    this.enqueue(this.chunker.flush());
    this.finished = true;
    this.wake?.();
  }

  /** Stops synthesis and sending now (the kiosk is told to clear by the caller). */
  cancel(): void {
    this.controller.abort();
    this.wake?.();
  }

  reportPlayed(playedMs: number): void {
    this.reportedPlayedMs = Math.max(this.reportedPlayedMs ?? 0, playedMs);
  }

  playbackDone(): void {
    this.doneAt = performance.now();
  }

  /** Reply audio is (probably) still coming out of the kiosk's speaker, or paused there. */
  get playing(): boolean {
    if (this.cancelled || this.doneAt !== null || this.firstFrameAt === null) return false;
    if (this.durationMs === null || this.pausedAt !== null) return true;
    return performance.now() < this.firstFrameAt + this.durationMs + this.pausedMs + PLAYBACK_SLACK_MS;
  }

  get paused(): boolean {
    return this.pausedAt !== null && !this.cancelled;
  }

  /**
   * The kiosk stops playing now and keeps its place (`reply.audio.pause`). Synthesis and sending go
   * on: the kiosk buffers what comes, so no bound of the reply (the model's stall and REPLY_MAX_MS,
   * the speech service's silence, the unread-socket wait) sees the pause. False if nothing plays.
   */
  pause(): boolean {
    if (!this.playing || this.pausedAt !== null) return false;
    this.pausedAt = performance.now();
    this.o.link.send({ type: 'reply.audio.pause', turnId: this.turnId });
    return true;
  }

  /** The kiosk plays on from where it stopped (`reply.audio.resume`); the paused time does not count as played. */
  resume(): boolean {
    if (this.pausedAt === null || this.cancelled) return false;
    this.pausedMs += performance.now() - this.pausedAt;
    this.pausedAt = null;
    this.o.link.send({ type: 'reply.audio.resume', turnId: this.turnId });
    return true;
  }

  /** Audio of this turn has reached the kiosk (a clear is then needed to stop it). */
  get started(): boolean {
    return this.firstFrameAt !== null;
  }

  /** What the senior heard: up to the last sentence mark played past, by the kiosk's own reports when it sends them. */
  heard(playedMs?: number): string {
    if (playedMs !== undefined) this.reportPlayed(playedMs);
    const ms = this.reportedPlayedMs ?? (this.firstFrameAt === null ? 0 : (this.pausedAt ?? performance.now()) - this.firstFrameAt - this.pausedMs);
    return heardText(this.text, this.marks, Math.max(0, Math.floor((ms * this.o.sampleRate) / 1000)));
  }

  private takeLine(line: string): void {
    this.enqueue(this.chunker.flush());
    this.chunker = new SentenceChunker();
    this.enqueue([line]);
  }

  private enqueue(pieces: string[]): void {
    for (const piece of pieces) {
      // Pieces are trimmed slices of the reply, in order: each is found after the previous one.
      const at = this.text.indexOf(piece, this.cursor);
      const end = at >= 0 ? at + piece.length : Math.min(this.text.length, this.chunker.consumed);
      this.cursor = end;
      this.pieces.push({ text: piece, end });
    }
    if (pieces.length > 0) this.wake?.();
  }

  private async run(): Promise<void> {
    try {
      await this.speakPieces();
      if (!this.cancelled) await this.flushPacket();
    } catch (err) {
      // A fault of ours (a frame that cannot be built, a send that throws), not the speech service's:
      // the rest of the turn is not spoken, the caption stays.
      this.finished = true;
      this.pieces.length = 0;
      if (!this.cancelled) this.o.onSpeechError(err);
    } finally {
      // The codec's memory goes with the reply, however it ended.
      this.encoder?.close();
    }
    if (this.cancelled || this.firstFrameAt === null) return;
    this.durationMs = Math.round((this.samplesSent * 1000) / this.o.sampleRate);
    this.o.link.send({ type: 'reply.audio.end', turnId: this.turnId, durationMs: this.durationMs });
  }

  /** Speaks the pieces in order as they come, until the reply is finished or cancelled. */
  private async speakPieces(): Promise<void> {
    for (;;) {
      const piece = this.pieces.shift();
      if (this.cancelled) return;
      if (!piece) {
        if (this.finished) return;
        await new Promise<void>((resolve) => (this.wake = resolve));
        this.wake = null;
        continue;
      }
      await this.speak(piece.text);
      if (this.cancelled) return;
      if (this.firstFrameAt !== null || this.pendingLength > 0) {
        // With Opus, the sentence's last few ms may still wait for a whole packet: the mark counts them.
        const sampleOffset = this.samplesSent + this.pendingLength;
        this.marks.push({ sampleOffset, textOffset: piece.end });
        this.o.link.send({ type: 'reply.audio.mark', turnId: this.turnId, sampleOffset, textOffset: piece.end });
      }
    }
  }

  private async speak(text: string): Promise<void> {
    const line = this.o.lines(text);
    if (line) return this.pending && line.length === 1 ? this.sendLine(line[0]!) : this.send(null, line);
    const { speaker, sampleRate } = this.o;
    const resampler = speaker.sampleRate === sampleRate ? null : new Resampler(speaker.sampleRate, sampleRate);
    try {
      if (this.pending && speaker.synthesizeOpus) await this.relay(resampler, speaker.synthesizeOpus(text, this.controller.signal));
      else await this.send(resampler, speaker.synthesize(text, this.controller.signal));
    } catch (err) {
      if (!this.cancelled) this.o.onSpeechError(err);
    }
  }

  /** Opus from the speaker: its packets go out as they are (no decoding, no encoding); its PCM, if any, is encoded. */
  private async relay(resampler: Resampler | null, pieces: AsyncIterable<SpeechPiece>): Promise<void> {
    let pcm = false;
    for await (const piece of pieces) {
      if (this.cancelled) return;
      if (piece instanceof Int16Array) pcm = true;
      const sent = piece instanceof Int16Array ? await this.sendPcm(resampler ? resampler.push(piece) : piece) : await this.relayPacket(piece);
      if (!sent) return;
    }
    if (pcm && resampler && !this.cancelled) await this.sendPcm(resampler.flush());
  }

  /** A pre-synthesized line in an Opus reply: its packets, encoded by the first reply that spoke it. */
  private async sendLine(pcm: Int16Array): Promise<void> {
    const kept = encodedLine(pcm);
    if (kept) {
      for (const packet of kept) if (!(await this.relayPacket(packet))) return;
      return;
    }
    if (!(await this.flushPacket())) return;
    // A stream of its own (an encoder of its own): the packets do not depend on what the reply said before.
    const encoder = this.o.opus!.encoder(this.o.sampleRate);
    const packets: OpusSpeechPacket[] = [];
    try {
      const frame = new Int16Array(encoder.frameSamples);
      for (let at = 0; at < pcm.length; at += frame.length) {
        if (!(await this.roomToSend())) return;
        const slice = pcm.subarray(at, at + frame.length);
        frame.fill(0).set(slice);
        const packet = { packet: encoder.encode(frame), durationMs: OPUS_PACKET_MS };
        packets.push(packet);
        this.emit(encodePacketFrame(this.turnId, this.samplesSent, packet.packet), frame.length);
      }
      keepEncodedLine(pcm, packets);
    } finally {
      encoder.close();
    }
  }

  /** A packet encoded elsewhere: what waits for a packet here goes first (padded), then it; false once the reply is cancelled. */
  private async relayPacket(packet: OpusSpeechPacket): Promise<boolean> {
    if (!(await this.flushPacket()) || !(await this.roomToSend())) return false;
    this.emit(encodePacketFrame(this.turnId, this.samplesSent, packet.packet), Math.round((packet.durationMs * this.o.sampleRate) / 1000));
    return true;
  }

  /** `resampler` null: the chunks are at the kiosk's rate already (framing copies them into each frame). */
  private async send(resampler: Resampler | null, chunks: AsyncIterable<Int16Array> | Iterable<Int16Array>): Promise<void> {
    for await (const chunk of chunks) {
      if (this.cancelled) return;
      if (!(await this.sendPcm(resampler ? resampler.push(chunk) : chunk))) return;
    }
    // The sentence's last milliseconds wait in the resampler for inputs after them: its end lets them out.
    if (resampler && !this.cancelled) await this.sendPcm(resampler.flush());
  }

  /** `pcm` as 20 ms PCM frames, or into Opus packets; false once the reply is cancelled. */
  private async sendPcm(pcm: Int16Array): Promise<boolean> {
    if (this.pending) return this.sendPackets(pcm);
    const frameSamples = Math.round((this.o.sampleRate * FRAME_MS) / 1000);
    for (let at = 0; at < pcm.length; at += frameSamples) {
      if (!(await this.roomToSend())) return false;
      const frame = pcm.subarray(at, at + frameSamples);
      this.emit(encodeAudioFrame(this.turnId, this.samplesSent, frame), frame.length);
    }
    return true;
  }

  /** Opus: fills 20 ms packets from `pcm`, each sent as it is whole; false once the reply is cancelled. */
  private async sendPackets(pcm: Int16Array): Promise<boolean> {
    const pending = this.pending!;
    let at = 0;
    while (at < pcm.length) {
      const take = Math.min(pending.length - this.pendingLength, pcm.length - at);
      pending.set(pcm.subarray(at, at + take), this.pendingLength);
      this.pendingLength += take;
      at += take;
      if (this.pendingLength < pending.length) break;
      if (!(await this.roomToSend())) return false;
      this.emitPacket();
    }
    return true;
  }

  /** Opus: the samples waiting for a packet, padded with silence to a whole one; false once the reply is cancelled. */
  private async flushPacket(): Promise<boolean> {
    if (!this.pending || this.pendingLength === 0) return !this.cancelled;
    if (!(await this.roomToSend())) return false;
    this.pending.fill(0, this.pendingLength);
    this.pendingLength = this.pending.length;
    this.emitPacket();
    return true;
  }

  private emitPacket(): void {
    this.encoder ??= this.o.opus!.encoder(this.o.sampleRate);
    // The encoder copies the samples in: the buffer is refilled at once.
    const packet = this.encoder.encode(this.pending!);
    const samples = this.pendingLength;
    this.pendingLength = 0;
    this.emit(encodePacketFrame(this.turnId, this.samplesSent, packet), samples);
  }

  /** Waits only when the kiosk is behind (no promise per frame otherwise); false once the reply is cancelled. */
  private async roomToSend(): Promise<boolean> {
    if (this.o.link.unreadBytes > AUDIO_UNREAD_LIMIT && !(await this.drained())) {
      this.cancel();
      return false;
    }
    return !this.cancelled;
  }

  /** `bytes` is built before the start is announced: a frame that cannot be built leaves no turn half-started. */
  private emit(bytes: Uint8Array, samples: number): void {
    if (this.firstFrameAt === null) {
      this.o.link.send({ type: 'reply.audio.start', turnId: this.turnId, encoding: this.o.opus ? 'opus' : 'pcm_s16le', sampleRate: this.o.sampleRate });
      this.firstFrameAt = performance.now();
      this.o.onFirstAudio();
    }
    this.o.link.sendAudio(bytes);
    this.samplesSent += samples;
  }

  /** Back-pressure: waits while the kiosk has not read what it was sent; false if it never does. */
  private async drained(): Promise<boolean> {
    const since = performance.now();
    while (this.o.link.unreadBytes > AUDIO_UNREAD_LIMIT) {
      if (this.cancelled || performance.now() - since > STUCK_SOCKET_MS) return false;
      await new Promise((resolve) => setTimeout(resolve, 20));
    }
    return !this.cancelled;
  }
}
