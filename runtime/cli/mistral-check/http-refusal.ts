import { APICallError } from '@ai-sdk/provider';
import { MistralError } from '@mistralai/mistralai/models/errors';

/** An HTTP answer other than success, from a call the check made itself (the socket upgrade, embeddings). */
export class HttpRefusal extends Error {
  override name = 'HttpRefusal';
  readonly status: number;
  readonly retryAfter: string | undefined;

  constructor(what: string, status: number, retryAfter: string | undefined, detail = '') {
    super(`${what} answered HTTP ${status}${detail ? `: ${detail}` : ''}`);
    this.status = status;
    this.retryAfter = retryAfter;
  }
}

/**
 * The HTTP status and Retry-After of a refused call, whichever client made it: the SDK's
 * MistralError, the AI SDK's APICallError (the agent's model), or the check's own HttpRefusal.
 * Undefined when the call failed without an HTTP answer.
 */
export function refusalOf(err: unknown): { status: number; retryAfter: string | undefined } | undefined {
  if (err instanceof HttpRefusal) return { status: err.status, retryAfter: err.retryAfter };
  if (err instanceof MistralError) return { status: err.statusCode, retryAfter: err.headers.get('retry-after') ?? undefined };
  if (APICallError.isInstance(err) && err.statusCode !== undefined) return { status: err.statusCode, retryAfter: err.responseHeaders?.['retry-after'] };
  return undefined;
}

/** Retry-After as ms: delta-seconds or an HTTP date; undefined when absent or unreadable. */
export function retryAfterMs(value: string | undefined, now = Date.now()): number | undefined {
  if (value === undefined || value.trim() === '') return undefined;
  if (/^\d+(\.\d+)?$/.test(value.trim())) return Number(value) * 1000;
  const at = Date.parse(value);
  return Number.isNaN(at) ? undefined : Math.max(0, at - now);
}
