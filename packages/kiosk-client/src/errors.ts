import type { ErrorFrame } from './protocol.ts';

/**
 * What can go wrong on the client side. Every failure the client reports is one of these, as a
 * `KioskError` (an Error, so a rejected promise has a stack) with a `code` to switch on:
 * - `connect_timeout`: the socket did not open within `connectTimeoutMs`
 * - `ready_timeout`: no `session.ready` within `readyTimeoutMs` after `session.start`
 * - `refused`: the server answered the upgrade with an HTTP error (`status`: 401 the token, 403 another
 *   origin, 429 too many sockets, 503 shutting down), seen by `wsSocket` or asked after the close
 * - `connect_failed`: nothing answered (DNS, a closed port, TLS …), or the server did not open the socket
 * - `unsupported_platform`: no WebSocket here (an old Node: the message names the version needed)
 * - `closed_before_ready`: the socket closed before the session started
 * - `start_refused`: the runtime answered `session.start` with an `error` (`serverError` holds it)
 * - `bad_frame`: the runtime sent something that is not the kiosk protocol (the frame is dropped)
 * - `unknown_frame`: a JSON frame of a type this client does not know (a newer runtime; dropped)
 * - `reply_timeout`: a turn's `reply.done` did not come within `replyTimeoutMs`
 * - `reply_lost`: a turn sent before the socket dropped was answered while the client was away
 * - `turn_refused`: the runtime refused the turn (`serverError` says why: `invalid_frame`, `no_session` …)
 * - `pong_timeout`: no `pong` within `pingTimeoutMs`
 * - `end_timeout`: no `session.closed` within `endTimeoutMs` after `session.end`
 * - `resume_failed`: the socket dropped and no resume succeeded within the back-off's bounds (if any),
 *   or the token was refused meanwhile (`status`, `cause` the last attempt's error)
 * - `not_ready`: a call that needs a live session, made without one
 * - `invalid_argument`: a call's argument breaks a protocol rule (said in the message)
 * - `closed`: the client was closed while the call waited
 * - `listener_failed`: an event listener threw (the client goes on)
 */
export type KioskErrorCode =
  | 'connect_timeout'
  | 'ready_timeout'
  | 'refused'
  | 'connect_failed'
  | 'unsupported_platform'
  | 'closed_before_ready'
  | 'start_refused'
  | 'bad_frame'
  | 'unknown_frame'
  | 'reply_timeout'
  | 'reply_lost'
  | 'turn_refused'
  | 'pong_timeout'
  | 'end_timeout'
  | 'resume_failed'
  | 'not_ready'
  | 'invalid_argument'
  | 'closed'
  | 'listener_failed';

export interface KioskErrorDetails {
  /** `refused` (and `resume_failed` after one): the HTTP status of the refused upgrade. */
  status?: number;
  /** `start_refused`, `reply_lost`: the runtime's own error frame. */
  serverError?: ErrorFrame;
  turnId?: string;
  cause?: unknown;
}

export class KioskError extends Error {
  readonly code: KioskErrorCode;
  readonly status: number | undefined;
  readonly serverError: ErrorFrame | undefined;
  readonly turnId: string | undefined;

  constructor(code: KioskErrorCode, message: string, details: KioskErrorDetails = {}) {
    super(message, details.cause === undefined ? undefined : { cause: details.cause });
    this.name = 'KioskError';
    this.code = code;
    this.status = details.status;
    this.serverError = details.serverError;
    this.turnId = details.turnId;
  }
}
