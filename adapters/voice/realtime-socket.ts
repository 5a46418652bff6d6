import { RealtimeConnection, type AudioFormat, type RealtimeEvent } from '@mistralai/mistralai/extra/realtime';
import { SDK_METADATA } from '@mistralai/mistralai/lib/config.js';
import { RealtimeTranscriptionSessionCreated$inboundSchema, RealtimeTranscriptionSessionUpdateMessage$outboundSchema } from '@mistralai/mistralai/models/components';
import WebSocket from 'ws';
import { retryAfterMs, throttleMs } from '../mistral/retry-after.ts';

/** The socket upgrade was answered with an HTTP status instead of a socket (429: rate limited). */
export class UpgradeRefusedError extends Error {
  override name = 'UpgradeRefusedError';
  readonly status: number;
  /** The answer's `Retry-After` (ms, capped); undefined when it named none. */
  readonly retryAfterMs: number | undefined;
  /** The wait before the next dial it asks for (ms): a 429's Retry-After (1 s when it names none), a 503's if it names one; null: none. */
  readonly throttleMs: number | null;

  constructor(status: number, headers: Readonly<Record<string, string | string[] | undefined>>) {
    const wait = retryAfterMs(headers) ?? undefined;
    super(`transcription socket refused with HTTP ${status}${wait === undefined ? '' : ` (retry after ${wait} ms)`}`);
    this.status = status;
    this.retryAfterMs = wait;
    this.throttleMs = throttleMs(status, headers);
  }
}

/** One realtime socket: the SDK's connection over it, its events (already listened to), and the `ws` socket itself. */
export interface RealtimeSocket {
  connection: RealtimeConnection;
  events: AsyncIterator<RealtimeEvent>;
  socket: WebSocket;
}

/**
 * Opens a realtime transcription socket as the SDK's `RealtimeTranscription.connect` does — the same URL,
 * Bearer and User-Agent headers, `session.created` awaited and parsed by the SDK's schema — on a `ws` socket of its
 * own, which the SDK's `RealtimeConnection` then carries. The SDK's connect turns a refused upgrade into
 * « Unexpected server response: 429 » and drops the answer's headers, so its `Retry-After` could not be
 * honoured; and the keep-alive needs the socket's ping and pong, which the SDK hides.
 */
export function dialRealtime(options: { serverUrl: string; apiKey: string; model: string; timeoutMs: number; signal?: AbortSignal }): Promise<RealtimeSocket> {
  const url = new URL('v1/audio/transcriptions/realtime', `${options.serverUrl.replace(/\/+$/, '')}/`);
  url.searchParams.set('model', options.model);
  const socket = new WebSocket(url, { headers: { Authorization: `Bearer ${options.apiKey}`, 'User-Agent': SDK_METADATA.userAgent } });
  // Errors end in a close, which the SDK's connection and the set-up read; an unheard 'error' would throw.
  socket.on('error', () => undefined);
  return new Promise<RealtimeSocket>((resolve, reject) => {
    const fail = (err: Error) => {
      cleanup();
      socket.terminate();
      reject(err);
    };
    const onResponse = (request: { destroy(): void }, response: { statusCode?: number; headers: Record<string, string | string[] | undefined>; resume(): void }) => {
      response.resume();
      request.destroy();
      fail(new UpgradeRefusedError(response.statusCode ?? 0, response.headers));
    };
    const onMessage = (data: WebSocket.RawData) => {
      const event = parseJson(String(data));
      if (event?.type === 'error') return fail(new Error(`transcription socket refused: ${describeServiceError(event)}`));
      if (event?.type !== 'session.created') return;
      const created = RealtimeTranscriptionSessionCreated$inboundSchema.safeParse(event);
      if (!created.success) return fail(new Error('transcription socket: session.created does not match the SDK’s schema'));
      cleanup();
      const connection = new RealtimeConnection(socket, created.data.session);
      // Listened to now, in this very event: the SDK's events() attaches its listener on its first next(),
      // and a message that came in the same network read would otherwise be lost before the caller asks.
      const iterator = connection[Symbol.asyncIterator]();
      let first: Promise<IteratorResult<RealtimeEvent>> | null = iterator.next();
      const events: AsyncIterator<RealtimeEvent> = {
        next: () => {
          const next = first ?? iterator.next();
          first = null;
          return next;
        },
        return: (value?: unknown) => iterator.return?.(value) ?? Promise.resolve({ done: true, value: undefined }),
      };
      resolve({ connection, events, socket });
    };
    const onClose = () => fail(new Error('transcription socket closed before session.created'));
    // The stream closed while its socket was opening: the socket goes at once, not once it is open.
    const onAbort = () => fail(new Error('transcription stream closed'));
    const timer = setTimeout(() => fail(new Error('transcription socket: no session.created in time')), Math.max(0, options.timeoutMs));
    const cleanup = () => {
      clearTimeout(timer);
      options.signal?.removeEventListener('abort', onAbort);
      socket.off('unexpected-response', onResponse);
      socket.off('message', onMessage);
      socket.off('close', onClose);
    };
    socket.on('unexpected-response', onResponse);
    socket.on('message', onMessage);
    socket.on('close', onClose);
    if (options.signal?.aborted) return onAbort();
    options.signal?.addEventListener('abort', onAbort, { once: true });
  });
}

/**
 * `session.update` as JSON: the documented settings through the SDK's own schema (which keeps no other
 * field), then the undocumented ones the operator turned on. The SDK's `updateSession` carries the audio
 * format alone, not `target_streaming_delay_ms`: the message goes out on the socket directly.
 */
export function sessionUpdateMessage(documented: { audioFormat: AudioFormat; targetStreamingDelayMs?: number }, undocumented: Record<string, unknown>): string {
  const message = RealtimeTranscriptionSessionUpdateMessage$outboundSchema.parse({ type: 'session.update', session: documented });
  return JSON.stringify({ ...message, session: { ...message.session, ...undocumented } });
}

function parseJson(text: string): { type?: unknown; error?: unknown } | null {
  try {
    const value: unknown = JSON.parse(text);
    return typeof value === 'object' && value !== null ? (value as { type?: unknown }) : null;
  } catch {
    return null;
  }
}

/** An `error` event's message and code, for logs and errors (never a transcript: the service sends none in one). */
export function describeServiceError(event: unknown): string {
  const error = (event as { error?: { message?: unknown; code?: unknown } }).error;
  const message = typeof error?.message === 'string' ? error.message : error?.message !== undefined ? JSON.stringify(error.message) : 'unknown error';
  return error?.code === undefined ? message : `${message} (code ${String(error.code)})`;
}
