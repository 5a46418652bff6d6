import { AudioEncoding, type RealtimeConnection, type RealtimeEvent } from '@mistralai/mistralai/extra/realtime';
import type WebSocket from 'ws';
import { INPUT_SAMPLE_RATE } from '../../machines/voice/voice.port.ts';
import { describeServiceError, dialRealtime, sessionUpdateMessage, type RealtimeSocket } from './realtime-socket.ts';
import { SocketFinals } from './transcript-text.ts';
import { SETUP_GRACE_MS, TranscriberUnavailableError, type SocketCounter, type StreamSettings } from './transcription-settings.ts';

/** One socket to the service, and what the stream knows of it. */
export interface Line {
  readonly connection: RealtimeConnection;
  readonly socket: WebSocket;
  readonly finals: SocketFinals;
  /** Live text since its last final (deltas joined as they come). */
  live: string;
  /** It was sent `input_audio.end`: its next final answers what it owes, then it closes. */
  ending: boolean;
  /** It was sent audio: a socket that has heard nothing can carry a replay as it is. */
  heard: boolean;
  /** It carries a replay of a flushed utterance: its live text repeats words already shown. */
  replaying: boolean;
  /** Its set-up carried undocumented settings and went ahead unacknowledged: a late error is their refusal. */
  unconfirmed: boolean;
  closed: boolean;
  /** performance.now() of its adoption and of its last audio. */
  adoptedAt: number;
  audioAt: number;
  /** The unanswered flush's next stage; the idle close. */
  answerTimer: NodeJS.Timeout | null;
  idleTimer: NodeJS.Timeout | null;
}

/** A socket set up, its events, and the first of them if the set-up read it (the set-up's own are not). */
export interface OpenedLine {
  line: Line;
  events: AsyncIterator<RealtimeEvent>;
  first: Promise<IteratorResult<RealtimeEvent>> | null;
}

/**
 * A socket, `session.created`, then one `session.update`: all within `connectTimeoutMs`. Refused while it
 * carried undocumented settings, the set-up is made again without them on a new socket (and so is every
 * later one: SessionFields).
 */
export async function openLine(settings: StreamSettings, names: string[], signal: AbortSignal): Promise<OpenedLine> {
  for (;;) {
    const deadline = Date.now() + settings.connectTimeoutMs;
    const undocumented = settings.fields.undocumented(names);
    const dialled = await dialRealtime({ serverUrl: settings.serverUrl, apiKey: settings.apiKey, model: settings.model, timeoutMs: deadline - Date.now(), signal: signal });
    countSocket(dialled.socket, settings.sockets);
    try {
      const { line, first } = await setUp(settings, dialled, undocumented, deadline);
      return { line, events: dialled.events, first };
    } catch (err) {
      void dialled.events.return?.(undefined);
      void dialled.connection.close();
      if (!(err instanceof SetUpRefusedError) || Object.keys(undocumented).length === 0) throw err;
      settings.fields.refuse(err.message);
    }
  }
}

/**
 * Sends `session.update` and waits for `session.updated` — or, as some versions never send it, for
 * SETUP_GRACE_MS without an error. Returns the event read last if it is not the set-up's (the pump's first).
 */
async function setUp(settings: StreamSettings, dialled: RealtimeSocket, undocumented: Record<string, unknown>, deadline: number): Promise<Omit<OpenedLine, 'events'>> {
  const audioFormat = { encoding: AudioEncoding.PcmS16le, sampleRate: INPUT_SAMPLE_RATE };
  const delay = settings.streamingDelayMs;
  dialled.socket.send(sessionUpdateMessage({ audioFormat, ...(delay !== undefined ? { targetStreamingDelayMs: delay } : {}) }, undocumented));
  const graceEnds = Math.min(deadline, Date.now() + SETUP_GRACE_MS);
  const line = newLine(dialled);
  for (;;) {
    const next = dialled.events.next();
    const outcome = await withTimeout(next, graceEnds - Date.now());
    if (outcome === 'timeout') {
      if (Date.now() >= deadline) throw new TranscriberUnavailableError('transcription set-up timed out');
      settings.onServiceEvent('no_session_updated');
      line.unconfirmed = Object.keys(undocumented).length > 0;
      return { line, first: next };
    }
    if (outcome.done) throw new TranscriberUnavailableError('transcription socket closed during set-up');
    const event = outcome.value;
    if (event.type === 'session.updated') return { line, first: null };
    if (event.type === 'error') throw new SetUpRefusedError(`transcription set-up refused: ${describeServiceError(event)}`);
  }
}

/** The service answered the set-up with an error. */
class SetUpRefusedError extends TranscriberUnavailableError {}

export function newLine(dialled: RealtimeSocket): Line {
  const now = performance.now();
  return {
    connection: dialled.connection,
    socket: dialled.socket,
    finals: new SocketFinals(),
    live: '',
    ending: false,
    heard: false,
    replaying: false,
    unconfirmed: false,
    closed: false,
    adoptedAt: now,
    audioAt: now,
    answerTimer: null,
    idleTimer: null,
  };
}

export function clearAnswerTimer(line: Line): void {
  if (line.answerTimer) clearTimeout(line.answerTimer);
  line.answerTimer = null;
}

/** `ws`'s readyState once the socket has closed. */
const WS_CLOSED = 3;

/**
 * Counts the socket until it closes. Counted from the dial (the socket is open), whatever happens next: a
 * set-up that fails closes it, and `ws` emits `close` after a handshake, its timeout, or a terminate alike.
 */
function countSocket(socket: WebSocket, sockets: SocketCounter | undefined): void {
  if (!sockets || socket.readyState === WS_CLOSED) return;
  sockets.opened();
  socket.once('close', () => sockets.closed());
}

function withTimeout<T>(promise: Promise<T>, ms: number): Promise<T | 'timeout'> {
  return new Promise<T | 'timeout'>((resolve, reject) => {
    const timer = setTimeout(() => resolve('timeout'), Math.max(0, ms));
    promise.then(resolve, reject).finally(() => clearTimeout(timer));
  });
}

