import type { AudioFormat, RealtimeConnection, RealtimeEvent, UnknownRealtimeEvent } from '@mistralai/mistralai/extra/realtime';
import type WebSocket from 'ws';
import { describeServiceError, dialRealtime, sessionUpdateMessage, type RealtimeSocket } from '../../../adapters/voice/realtime-socket.ts';
import { INPUT_SAMPLE_RATE } from '../../../machines/voice/voice.port.ts';
import { delay } from '../../../adapters/mistral/retry-after.ts';

/** One event as it arrived, and when (performance.now()). */
export interface TimedEvent {
  event: RealtimeEvent;
  at: number;
}

/** The socket gave no event within the bound, or closed first. */
export type NoEvent = 'timeout' | 'closed';

/** The documented settings of `session.update`, as the SDK types them. */
export interface DocumentedSession {
  audioFormat: AudioFormat;
  targetStreamingDelayMs?: number;
}

/** What set-up with one `session.update` came to. */
export type SetupOutcome =
  | { kind: 'acknowledged'; ms: number; echoed: Record<string, unknown> }
  | { kind: 'silent' }
  | { kind: 'refused'; message: string };

/** Audio goes in appends of 100 ms, as the runtime's transcriber batches it. */
const APPEND_MS = 100;
const APPEND_SAMPLES = (INPUT_SAMPLE_RATE * APPEND_MS) / 1000;

/**
 * One realtime transcription socket opened for a probe, dialled as the runtime dials it
 * (`dialRealtime`: the SDK's connection over a `ws` socket whose refused upgrade keeps its status
 * and Retry-After), its `session.update` written as the runtime writes it. Every event is kept with
 * its time; reads wait on the socket within a bound, never longer.
 */
export class ProbeSocket {
  /** Every event received after `session.created`, in order. */
  readonly events: TimedEvent[] = [];
  /** Seconds of audio sent on this socket. */
  audioSeconds = 0;
  private read = 0;
  private closed = false;
  /** The last `session.updated`'s session as sent (the SDK's schema drops the fields it does not know). */
  private updatedSession: Record<string, unknown> = {};
  private wake: (() => void) | undefined;
  private readonly ws: WebSocket;
  private readonly connection: RealtimeConnection;

  private constructor(dialled: RealtimeSocket) {
    this.ws = dialled.socket;
    this.connection = dialled.connection;
    this.ws.on('message', (data) => {
      const session = sessionUpdatedIn(String(data));
      if (session) this.updatedSession = session;
    });
    void this.pump(dialled.events);
  }

  /** The socket upgraded and its `session.created` received, within `boundMs`; a refused upgrade rejects with UpgradeRefusedError. */
  static async open(serverUrl: string, apiKey: string, model: string, boundMs: number, signal: AbortSignal): Promise<ProbeSocket> {
    return new ProbeSocket(await dialRealtime({ serverUrl, apiKey, model, timeoutMs: boundMs, signal }));
  }

  get isClosed(): boolean {
    return this.closed;
  }

  /**
   * Sends `session.update` with `session` as the runtime does (on the socket itself: the SDK's
   * `updateSession` sends `audio_format` alone), then waits `boundMs` for its answer.
   */
  async configure(documented: DocumentedSession, undocumented: Record<string, unknown>, boundMs: number, signal: AbortSignal): Promise<SetupOutcome> {
    const sentAt = performance.now();
    this.ws.send(sessionUpdateMessage(documented, undocumented));
    const answer = await this.waitFor((e) => e.type === 'session.updated' || e.type === 'error', boundMs, signal);
    if (answer === 'closed') return { kind: 'refused', message: 'the socket closed' };
    if (answer === 'timeout') return { kind: 'silent' };
    if (answer.event.type === 'error') return { kind: 'refused', message: describeError(answer.event) };
    return { kind: 'acknowledged', ms: answer.at - sentAt, echoed: this.updatedSession };
  }

  /** Streams `pcm` in 100 ms appends at the pace it was spoken (as a kiosk's microphone arrives). */
  async stream(pcm: Int16Array, signal: AbortSignal): Promise<void> {
    const start = performance.now();
    for (let at = 0, n = 1; at < pcm.length && !this.closed; at += APPEND_SAMPLES, n++) {
      const part = pcm.subarray(at, at + APPEND_SAMPLES);
      await this.connection.sendAudio(new Uint8Array(part.buffer, part.byteOffset, part.byteLength));
      this.audioSeconds += part.length / INPUT_SAMPLE_RATE;
      await delay(Math.max(0, start + n * APPEND_MS - performance.now()), signal);
    }
  }

  flush(): Promise<void> {
    return this.connection.flushAudio();
  }

  end(): Promise<void> {
    return this.connection.endAudio();
  }

  /** The index the next event received will have: where a step's own events start. */
  get mark(): number {
    return this.events.length;
  }

  /** Moves the read position to `index` (a `mark`): what came before it is not read again. */
  seek(index: number): void {
    this.read = index;
  }

  /** The first event from the read position on that `wanted` accepts (events before it are passed over, still kept). */
  async waitFor(wanted: (event: RealtimeEvent) => boolean, boundMs: number, signal: AbortSignal): Promise<TimedEvent | NoEvent> {
    const deadline = performance.now() + boundMs;
    for (;;) {
      while (this.read < this.events.length) {
        const next = this.events[this.read++]!;
        if (wanted(next.event)) return next;
      }
      if (this.closed) return 'closed';
      const left = deadline - performance.now();
      if (left <= 0) return 'timeout';
      await this.arrival(left, signal);
    }
  }

  /** Closes the socket (a close frame; cut if the service does not answer it within a second). */
  close(): void {
    if (this.closed) return;
    this.ws.close(1000);
    setTimeout(() => this.ws.terminate(), 1_000).unref();
  }

  private async pump(events: AsyncIterator<RealtimeEvent>): Promise<void> {
    try {
      for (let next = await events.next(); !next.done; next = await events.next()) this.push({ event: next.value, at: performance.now() });
    } finally {
      this.closed = true;
      this.wake?.();
    }
  }

  private push(event: TimedEvent): void {
    this.events.push(event);
    this.wake?.();
  }

  /** Resolves at the next event or close, or after `ms`, or on `signal`: whichever comes first. */
  private arrival(ms: number, signal: AbortSignal): Promise<void> {
    return new Promise<void>((resolve, reject) => {
      const done = () => {
        clearTimeout(timer);
        signal.removeEventListener('abort', onAbort);
        this.wake = undefined;
      };
      const onAbort = () => {
        done();
        reject(signal.reason);
      };
      const timer = setTimeout(() => (done(), resolve()), ms);
      this.wake = () => (done(), resolve());
      if (signal.aborted) return onAbort();
      signal.addEventListener('abort', onAbort, { once: true });
    });
  }
}

/** The text of a delta or a final, read from the raw message when the SDK's schema refused it. */
export function textOf(event: RealtimeEvent): string {
  const text = (event as { text?: unknown }).text ?? (rawOf(event) as { text?: unknown } | undefined)?.text;
  return typeof text === 'string' ? text : '';
}

/** The SDK yields a message its schema refuses (or of a type it does not know) as an unknown event, with the raw message. */
export function rawOf(event: RealtimeEvent): unknown {
  return unknownEvent(event)?.raw;
}

/** An event of a type the SDK knows whose message failed the SDK's schema: what the runtime would not read. */
export function schemaFailure(event: RealtimeEvent): string | undefined {
  const error = unknownEvent(event)?.error;
  return error ? `${event.type}: ${error.message}` : undefined;
}

/** The event as the SDK yields what it could not read (a type it does not know, or a message its schema refused). */
export function unknownEvent(event: RealtimeEvent): UnknownRealtimeEvent | undefined {
  return 'raw' in event ? (event as UnknownRealtimeEvent) : undefined;
}

/** An `error` event's message and code, read from the raw message when the SDK's schema refused it. */
export function describeError(event: RealtimeEvent): string {
  return describeServiceError(rawOf(event) ?? event);
}

/** The session of a raw `session.updated` message; undefined for any other message. */
function sessionUpdatedIn(message: string): Record<string, unknown> | undefined {
  if (!message.includes('"session.updated"')) return undefined;
  try {
    const parsed = JSON.parse(message) as { type?: unknown; session?: unknown };
    return parsed.type === 'session.updated' && typeof parsed.session === 'object' && parsed.session !== null ? (parsed.session as Record<string, unknown>) : undefined;
  } catch {
    return undefined;
  }
}
