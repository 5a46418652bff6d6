import type { ServerResponse } from 'node:http';
import type { ServiceBehaviour } from './service-behaviours.ts';

/**
 * The service behaviours a fake plays (service-behaviours.ts), switched on with `add`. `rate-limited`
 * refuses the first call to each endpoint after it is switched on; switching it on again (after a
 * `delete`) re-arms it, so tests in one file each get their 429.
 */
export class ServiceBehaviourSet extends Set<ServiceBehaviour> {
  /** The endpoints `rate-limited` has refused once since it was switched on. */
  private readonly refused = new Set<string>();

  override add(behaviour: ServiceBehaviour): this {
    if (behaviour === 'rate-limited' && !this.has(behaviour)) this.refused.clear();
    return super.add(behaviour);
  }

  /** Whether `rate-limited` refuses this call to `endpoint` (the first since it was switched on); it counts as played. */
  rateLimits(endpoint: string): boolean {
    if (!this.has('rate-limited') || this.refused.has(endpoint)) return false;
    this.refused.add(endpoint);
    return true;
  }
}

/**
 * Mistral's answer to a call over the rate limit: 429, `Retry-After` (seconds, or an HTTP date), and
 * the error body integrators report from the service (cline#9085, raycast/extensions#31107).
 */
export function answerRateLimited(res: ServerResponse, retryAfter: string): void {
  res.writeHead(429, { 'content-type': 'application/json', 'retry-after': retryAfter });
  res.end(JSON.stringify({ object: 'error', message: 'Rate limit exceeded', type: 'rate_limited', param: null, code: '1300' }));
}
