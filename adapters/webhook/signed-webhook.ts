import { createHmac } from 'node:crypto';

export const SIGNATURE_HEADER = 'x-kohami-signature';
export const DELIVERY_HEADER = 'x-kohami-delivery';
/** A payload is a few hundred bytes; one past this is a bug, never sent. */
export const MAX_WEBHOOK_BODY_BYTES = 4096;

/** `t=<unix seconds>,v1=<hex HMAC-SHA256(secret, "<t>.<body>")>`: Stripe's scheme, so receivers know how to check it. */
export function webhookSignature(secret: string, body: string, unixSeconds: number): string {
  return `t=${unixSeconds},v1=${createHmac('sha256', secret).update(`${unixSeconds}.${body}`).digest('hex')}`;
}

export interface WebhookTarget {
  url: string;
  secret: string;
  /** The longest one request may take, answer included. */
  timeoutMs: number;
}

/**
 * A JSON POST signed with the shared secret: the time it was signed and the body are covered, so a
 * receiver refuses a forged or replayed one. The delivery id lets the receiver drop a repeat.
 * The answer's body is never read (only its status), and redirects are not followed.
 */
export async function postSigned(target: WebhookTarget, deliveryId: string, payload: object, now: () => number = Date.now): Promise<number> {
  const body = JSON.stringify(payload);
  if (Buffer.byteLength(body) > MAX_WEBHOOK_BODY_BYTES) throw new Error(`webhook body over ${MAX_WEBHOOK_BODY_BYTES} bytes`);
  const res = await fetch(target.url, {
    method: 'POST',
    headers: {
      'content-type': 'application/json',
      'user-agent': 'kohami-runtime',
      [SIGNATURE_HEADER]: webhookSignature(target.secret, body, Math.floor(now() / 1000)),
      [DELIVERY_HEADER]: deliveryId,
    },
    body,
    redirect: 'manual',
    signal: AbortSignal.timeout(target.timeoutMs),
  });
  await res.body?.cancel();
  return res.status;
}
