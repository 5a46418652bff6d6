import type { Browser, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { generateToken } from '../../adapters/postgres/tokens.ts';
import { FLUXES } from '../../machines/session/ports.ts';
import { KioskClient } from '../support/kiosk-client.ts';
import { CONSOLE_VIEWPORT, launchConsoleBrowser } from '../support/ops-console-page.ts';
import { KIOSK_TOKEN, startTestRuntime, type TestRuntime } from '../support/runtime.ts';

/**
 * The operator console when its calls go wrong: a stream that opens but never says `hello` is dropped
 * after the requests' bound (docs/operations.md: each request has 5 s) and tried again; a failed
 * /v1/ops/machine is not kept as the machine (the detail panel still draws, the next connection reads
 * it); and the flux filter offers the fluxes a turn can have, nothing else.
 */

/** The console's bound on each request (REQUEST_TIMEOUT_MS in runtime/ops/console.html). */
const REQUEST_TIMEOUT_MS = 5000;

let rt: TestRuntime;
let browser: Browser;
let operator: string;

beforeAll(async () => {
  rt = await startTestRuntime();
  operator = generateToken('operator');
  await rt.directory.addApiToken('operator', operator, 'console bounds');
  browser = await launchConsoleBrowser();
}, 60_000);
afterAll(async () => {
  await browser?.close();
  await rt?.close();
});

/** A console page, its uncaught errors collected, not yet connected. */
async function consolePage(): Promise<{ page: Page; errors: string[] }> {
  const page = await browser.newPage({ viewport: CONSOLE_VIEWPORT });
  const errors: string[] = [];
  page.on('pageerror', (e) => errors.push(e.message));
  return { page, errors };
}

async function connect(page: Page) {
  await page.goto(`${rt.url}/ops`);
  await page.fill('#token', operator);
  await page.click('#connect');
}

describe('operator console (/ops) bounds', () => {
  it('a stream that opens but never says hello is dropped after the request bound, and tried again', async () => {
    const { page, errors } = await consolePage();
    await page.clock.install();
    // The stream's upgrade answered by the test, which never sends a frame: opened, silent.
    let opened = 0;
    await page.routeWebSocket(/\/v1\/ops\/stream/, () => void (opened += 1));
    await page.goto(`${rt.url}/ops`);
    await page.fill('#token', operator);
    // The page's time stands still from here but for what the test runs: an installed clock still flows
    // at the wall's pace, and a loaded machine took the bound's last 500 ms before the test looked.
    await page.clock.pauseAt(Date.now() + 1000);
    await page.click('#connect');
    await expect.poll(() => opened, { timeout: 30_000 }).toBe(1);
    await page.clock.runFor(REQUEST_TIMEOUT_MS - 500);
    expect(await page.getAttribute('#status', 'class')).not.toContain('retry');
    await page.clock.runFor(1000);
    await expect.poll(() => page.textContent('#status'), { timeout: 30_000 }).toMatch(/^hors ligne — nouvel essai dans \d+ s$/);
    // The back-off's first wait (1 s) later, it opens the stream again.
    await page.clock.runFor(1000);
    await expect.poll(() => opened, { timeout: 30_000 }).toBe(2);
    expect(errors).toEqual([]);
    await page.close();
  }, 120_000);

  it('a failed /v1/ops/machine is not kept: the detail panel draws, and the next connection reads the machine', async () => {
    const { page, errors } = await consolePage();
    let refused = 0;
    await page.route('**/v1/ops/machine', (route) => {
      if (refused > 0) return route.continue();
      refused += 1;
      return route.fulfill({ status: 503, contentType: 'application/json', body: '{"error":"unavailable","message":"try later"}' });
    });
    const kiosk = await KioskClient.connect(rt.wsUrl, KIOSK_TOKEN);
    const { sessionId } = await kiosk.start();
    await connect(page);
    await page.waitForSelector('#status.ok');
    expect(refused).toBe(1);
    await page.locator(`tr[data-session="${sessionId}"]`).click();
    await expect.poll(() => page.textContent('#detail-summary'), { timeout: 30_000 }).toContain('tour(s)');
    expect(await page.locator('#detail [data-state]').count()).toBe(0);
    expect(errors).toEqual([]);
    // Connecter again: the machine is read this time, and the panel draws it.
    await page.click('#connect');
    await page.waitForSelector('#detail [data-state="conversation.idle"].active', { timeout: 30_000 });
    expect(errors).toEqual([]);
    kiosk.close();
    await page.close();
  }, 120_000);

  it('the flux filter offers the fluxes a turn has, and nothing else', async () => {
    const { page } = await consolePage();
    await page.goto(`${rt.url}/ops`);
    const offered = await page.locator('#filter-flux option').evaluateAll((options) => options.map((o) => (o as HTMLOptionElement).value));
    expect(offered.sort()).toEqual(['', ...FLUXES].sort());
    await page.close();
  });
});
