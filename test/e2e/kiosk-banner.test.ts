import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { loadConfig } from '../../runtime/config.ts';
import { bannerLines } from '../../runtime/main.ts';
import { ADMIN_TOKEN, KIOSK_TOKEN, startTestRuntime, type TestRuntime } from '../support/runtime.ts';

let rt: TestRuntime;
const config = loadConfig({ KOHAMI_ENV: 'test', DEV_KIOSK_TOKEN: KIOSK_TOKEN, DEV_ADMIN_TOKEN: ADMIN_TOKEN });

beforeAll(async () => {
  rt = await startTestRuntime();
}, 60_000);
afterAll(async () => {
  await rt?.close();
});

/** The banner line that starts with `label`, and the URL it gives. */
function urlOf(lines: string[], label: string): string {
  const line = lines.find((l) => l.startsWith(`  ${label}`));
  expect(line, `a "${label}" line in:\n${lines.join('\n')}`).toBeDefined();
  return /(https?|wss?):\/\/\S+/.exec(line!)![0];
}

describe('the start banner', () => {
  it('prints the browser kiosk page with the demo kiosk token, and the runtime serves that page', async () => {
    const lines = bannerLines(config, rt, rt.seed, true);
    const page = urlOf(lines, 'kiosk page:');
    expect(page).toBe(`${rt.url}/kiosk?token=${KIOSK_TOKEN}`);
    const res = await fetch(page);
    expect(res.status).toBe(200);
    expect(res.headers.get('content-type')).toContain('text/html');
    expect(await res.text()).toContain('<script');
    expect(urlOf(lines, 'kiosk WebSocket:')).toBe(rt.wsUrl);
  });

  it('says the recall floor it applies: offline, the local embedder’s calibrated one', () => {
    const line = bannerLines(config, rt, rt.seed, true).find((l) => l.startsWith('  recall floor:'));
    expect(line).toMatch(/^ {2}recall floor: {5}similarity ≥ 0\.\d{4}, held-out precision 0\.\d{3}, recall 0\.\d{3} on \d+ held-out turns/);
  });

  it('offline (no MISTRAL_API_KEY) it names no Mistral region, and /ready says `offline`', async () => {
    expect(bannerLines(config, rt, rt.seed, true).some((l) => l.startsWith('  Mistral region:'))).toBe(false);
    expect(await (await fetch(`${rt.url}/ready`)).json()).toEqual({ status: 'ready', mistralRegion: 'offline' });
  });

  it('without demo tokens (production) it still prints the page, which then asks for the token', () => {
    const lines = bannerLines(loadConfig({ KOHAMI_ENV: 'production', DATABASE_URL: 'postgres://db.example:5432/kohami' }), rt, null, false);
    expect(urlOf(lines, 'kiosk page:')).toBe(`${rt.url}/kiosk`);
    expect(lines.join('\n')).not.toContain('token=');
  });
});
