import type { IncomingHttpHeaders } from 'node:http';
import { APICallError } from '@ai-sdk/provider';
import { MistralError } from '@mistralai/mistralai/models/errors';
import { retryAfterMs } from '../../../adapters/mistral/retry-after.ts';
import { UpgradeRefusedError } from '../../../adapters/voice/realtime-socket.ts';

/** An HTTP answer other than success to a call the check makes on the runtime's own endpoint client (embeddings). */
export class HttpRefusal extends Error {
  override name = 'HttpRefusal';
  readonly status: number;
  /** The wait the answer's Retry-After asks (ms); undefined when it names none. */
  readonly retryAfterMs: number | undefined;

  constructor(what: string, status: number, headers: IncomingHttpHeaders) {
    super(`${what} answered HTTP ${status}`);
    this.status = status;
    this.retryAfterMs = retryAfterMs(headers) ?? undefined;
  }
}

/**
 * The HTTP status of a refused call and the wait its Retry-After asks (ms), whichever client made it:
 * the SDK's MistralError, the AI SDK's APICallError (the agent's model), the transcriber's refused
 * socket upgrade, or the check's own HttpRefusal. Undefined when the call failed without an HTTP answer.
 */
export function refusalOf(err: unknown): { status: number; retryAfterMs: number | undefined } | undefined {
  if (err instanceof UpgradeRefusedError) return { status: err.status, retryAfterMs: err.retryAfterMs };
  if (err instanceof HttpRefusal) return { status: err.status, retryAfterMs: err.retryAfterMs };
  if (err instanceof MistralError) return { status: err.statusCode, retryAfterMs: retryAfterMs(Object.fromEntries(err.headers)) ?? undefined };
  if (APICallError.isInstance(err) && err.statusCode !== undefined) return { status: err.statusCode, retryAfterMs: retryAfterMs(err.responseHeaders) ?? undefined };
  return undefined;
}
