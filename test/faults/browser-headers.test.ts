import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestRuntime, type TestRuntime } from '../support/runtime.ts';

let rt: TestRuntime;
beforeAll(async () => {
  rt = await startTestRuntime({ apiDocs: true });
});
afterAll(async () => rt.close());

const get = (path: string) => fetch(`${rt.url}${path}`).then((res) => ({ status: res.status, headers: res.headers }));

describe('what the browser pages are served with', () => {
  it.each(['/kiosk', '/ops', '/aidant'])('%s: a Content-Security-Policy admitting only its own scripts, no framing, no sniffing, no Referer', async (path) => {
    const { status, headers } = await get(path);
    expect(status).toBe(200);
    const csp = headers.get('content-security-policy')!;
    expect(csp).toContain("default-src 'none'");
    expect(csp).toMatch(/script-src 'self'( 'sha256-[A-Za-z0-9+/=]+')*(;|$)/);
    expect(csp).not.toContain('unsafe-inline');
    expect(csp).toContain("frame-ancestors 'none'");
    expect(headers.get('x-frame-options')).toBe('DENY');
    expect(headers.get('x-content-type-options')).toBe('nosniff');
    expect(headers.get('referrer-policy')).toBe('no-referrer');
  });

  it("/docs: Swagger UI's own policy, without upgrade-insecure-requests (plain http on loopback), and the same headers", async () => {
    const { status, headers } = await get('/docs/static/index.html');
    expect(status).toBe(200);
    expect(headers.get('content-security-policy')).toContain("script-src 'self'");
    expect(headers.get('content-security-policy')).not.toContain('upgrade-insecure-requests');
    expect(headers.get('x-content-type-options')).toBe('nosniff');
    expect(headers.get('referrer-policy')).toBe('no-referrer');
  });

  it('the kiosk’s and the caregivers’ page’s scripts: nosniff and no Referer', async () => {
    for (const path of ['/aidant/aidant.js', '/aidant/mood-chart.js', '/aidant/mood-alerts.js', '/aidant/words.js', '/kiosk/kiosk.js', '/kiosk/kiosk-reconnect.js', '/kiosk/client/index.ts', '/kiosk/client/browser.ts', '/kiosk/client/browser/capture-worklet.ts', '/kiosk/client/browser/sinc-resampler.js']) {
      const { status, headers } = await get(path);
      expect(status, path).toBe(200);
      expect(headers.get('x-content-type-options'), path).toBe('nosniff');
      expect(headers.get('referrer-policy'), path).toBe('no-referrer');
    }
  });
});
