import { MistralError } from '@mistralai/mistralai/models/errors';
import { DEFAULT_THROTTLE_PAUSE_MS, delay } from '../../../adapters/mistral/retry-after.ts';
import type { Config } from '../../config.ts';
import { refusalOf } from './http-refusal.ts';
import type { Report } from './report.ts';

/** The bounds of the check's waits (ms). */
export interface CheckBounds {
  /** A socket upgraded and its `session.created`: the SDK's connect, as the runtime bounds it. */
  connectMs: number;
  /** `session.update`'s answer: the transcriber's whole set-up bound (2 s). */
  setupMs: number;
  /** A flush's final: the transcriber's own default bound (5 s), past which it is unanswered. */
  flushMs: number;
  /** `input_audio.end`'s answer and the socket's close. */
  endMs: number;
  /** How long the idle socket is left without audio (0: not probed); the command sets it from STT_IDLE_CLOSE_MS. */
  idleMs: number;
  /** One HTTP call's answer (speech: its first packet; chat: its first part). */
  httpMs: number;
  /** One HTTP call whole (a sentence of speech, a chat stream). */
  callMs: number;
  /** The longest Retry-After waited before the one retry of a call answered 429. */
  retryCapMs: number;
}

export const DEFAULT_BOUNDS: Omit<CheckBounds, 'idleMs'> = { connectMs: 5_000, setupMs: 2_000, flushMs: 5_000, endMs: 3_000, httpMs: 5_000, callMs: 15_000, retryCapMs: 5_000 };

export interface CheckContext {
  config: Config;
  apiKey: string;
  report: Report;
  bounds: CheckBounds;
  /** The whole run's bound: aborted, every wait ends. */
  signal: AbortSignal;
}

/**
 * `call`, and once more after the Retry-After of a 429 (at most `retryCapMs`; 1 s when the answer
 * names none, as the runtime waits): the runtime's own calls honour it, and the check reports every 429 it met rather than
 * fail on it. A second 429 is reported and thrown.
 */
export async function honouringRetryAfter<T>(ctx: CheckContext, what: string, call: () => Promise<T>): Promise<T> {
  try {
    return await call();
  } catch (err) {
    const refusal = refusalOf(err);
    if (refusal?.status !== 429) throw err;
    ctx.report.rateLimits.push({ call: what, retryAfterMs: refusal.retryAfterMs });
    await delay(Math.min(refusal.retryAfterMs ?? DEFAULT_THROTTLE_PAUSE_MS, ctx.bounds.retryCapMs), ctx.signal);
    try {
      return await call();
    } catch (again) {
      const second = refusalOf(again);
      if (second?.status === 429) ctx.report.rateLimits.push({ call: what, retryAfterMs: second.retryAfterMs });
      throw again;
    }
  }
}

/** Longest error text the report shows: a service's error body can be long. */
const MAX_MESSAGE_CHARS = 160;

/**
 * An error for the report: an HTTP refusal as its status and the service's own short message, anything
 * else as its message (never a key: no client puts one in its messages).
 */
export function messageOf(err: unknown): string {
  const refusal = refusalOf(err);
  const text = refusal && err instanceof MistralError ? `HTTP ${refusal.status}${serviceMessage(err.body)}` : err instanceof Error ? err.message : String(err);
  return text.length > MAX_MESSAGE_CHARS ? `${text.slice(0, MAX_MESSAGE_CHARS - 1)}…` : text;
}

/** Mistral's error body's message (`message`, or a 422's first `detail`), as `: …`; empty when it has none. */
function serviceMessage(body: string): string {
  try {
    const parsed = JSON.parse(body) as { message?: unknown; detail?: Array<{ msg?: unknown }> | unknown };
    const message = typeof parsed.message === 'string' ? parsed.message : Array.isArray(parsed.detail) ? (parsed.detail[0] as { msg?: unknown } | undefined)?.msg : parsed.detail;
    return typeof message === 'string' && message !== '' ? `: ${message}` : '';
  } catch {
    return '';
  }
}
