import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import WebSocket from 'ws';
import { startTestRuntime, type TestRuntime } from '../support/runtime.ts';

/** A token-shaped canary: every request below carries it in its query string, where kiosks put tokens. */
const CANARY = 'kiosk_CANARYtokenOutOfTheLog0123456789';

let rt: TestRuntime;
beforeAll(async () => {
  rt = await startTestRuntime();
});
afterAll(async () => rt.close());

describe('tokens in URLs never reach the log', () => {
  it('on a route that does not exist (the banner link with a trailing slash), a known route, a bad body and a refused upgrade', async () => {
    const q = `token=${CANARY}`;
    const notFound = await fetch(`${rt.url}/kiosk/?${q}`);
    expect(notFound.status).toBe(404);
    expect(await notFound.json()).toEqual({ error: 'not_found', message: 'Route GET:/kiosk/?[redacted] not found' });
    expect((await fetch(`${rt.url}/no/such/route?${q}`)).status).toBe(404);
    expect((await fetch(`${rt.url}/v1/admin/seniors/00000000-0000-4000-8000-000000000000/consents?${q}`)).status).toBe(401);
    expect((await fetch(`${rt.url}/kiosk?${q}`)).status).toBe(200);
    const badBody = await fetch(`${rt.url}/v1/admin/seniors/00000000-0000-4000-8000-000000000000/facts?${q}`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: '{not json' });
    expect(badBody.status).toBeGreaterThanOrEqual(400);
    const refused = new WebSocket(`${rt.wsUrl}?${q}`);
    const status = await new Promise<number>((resolve) => refused.on('unexpected-response', (_req, res) => resolve(res.statusCode!)));
    expect(status).toBe(401);

    // Each request was logged (the capture is at debug): an empty search means something.
    expect(rt.logs.text).toContain('/no/such/route?[redacted]');
    expect(rt.logs.text).not.toContain(CANARY);
  });
});
