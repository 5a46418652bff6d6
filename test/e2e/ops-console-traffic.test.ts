import type { Browser, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { generateToken } from '../../adapters/postgres/tokens.ts';
import { KioskClient } from '../support/kiosk-client.ts';
import { streamingModel } from '../support/models.ts';
import { launchConsoleBrowser, namedSeniors, openConsole } from '../support/ops-console-page.ts';
import { startTestRuntime, type TestRuntime } from '../support/runtime.ts';

/** The load: 50 live sessions, each taking turns back to back. */
const SESSIONS = 50;
/** 50 kiosks, their turns and Chromium on a shared machine: generous, each wait is on the page's state. */
const TEST_MS = 240_000;

let rt: TestRuntime;
let browser: Browser;
let page: Page;
let seniors: Awaited<ReturnType<typeof namedSeniors>>;

beforeAll(async () => {
  // Fifty sessions start at once: more than the default start burst, and turns faster than a person's.
  rt = await startTestRuntime({ agentModel: streamingModel(['Je vous écoute, ', 'racontez-moi.']), rateLimit: { perSecond: 1e6, burst: 1e6 } }, { KIOSK_STARTS_BURST: String(2 * SESSIONS), LOG_LEVEL: 'warn' });
  const operator = generateToken('operator');
  await rt.directory.addApiToken('operator', operator, 'console');
  seniors = await namedSeniors(rt.directory, Array.from({ length: SESSIONS }, (_, i) => `Résidente ${i + 1}`));
  browser = await launchConsoleBrowser();
  page = await openConsole(browser, rt.url, operator);
}, TEST_MS);
afterAll(async () => {
  await browser?.close();
  await rt?.close();
});

/** The turns the table shows, summed over its rows. */
const shownTurns = () => page.$$eval('#rows td.turns', (cells) => cells.reduce((n, c) => n + Number(c.textContent), 0));

describe('operator console (/ops) under 50 sessions of traffic', () => {
  it('updates its rows in place — no row or cell inserted — and a click on a row opens that session', async () => {
    const kiosks = await Promise.all(seniors.map((s) => KioskClient.connect(rt.wsUrl, s.token)));
    const ids = await Promise.all(kiosks.map(async (k) => String((await k.start()).sessionId)));
    await expect.poll(() => page.locator('#rows tr').count(), { timeout: TEST_MS }).toBe(SESSIONS);

    // From here on every session exists: a table updated in place inserts no row and no cell, and its
    // rows keep their height (none moves under the pointer): the table's body is never resized.
    await page.evaluate(() => {
      const inserted = { rows: 0, cells: 0, resized: -1 };
      (window as unknown as { inserted: typeof inserted }).inserted = inserted;
      const body = document.getElementById('rows')!;
      new MutationObserver((records) => {
        for (const r of records) for (const n of r.addedNodes) {
          if (n.nodeName === 'TR') inserted.rows += 1;
          if (n.nodeName === 'TD') inserted.cells += 1;
        }
      }).observe(body, { childList: true, subtree: true });
      // Its first call is the observation's start.
      new ResizeObserver(() => (inserted.resized += 1)).observe(body);
    });
    const before = await shownTurns();
    let stop = false;
    const traffic = kiosks.map(async (k, i) => {
      for (let n = 0; !stop; n++) await k.turn(`k${i}-${n}`, n % 2 ? 'bonjour' : 'raconte-moi ta journée');
    });

    // Two turns a session while the table is watched, then a click in the middle of it all.
    await expect.poll(shownTurns, { timeout: TEST_MS, interval: 250 }).toBeGreaterThanOrEqual(before + 2 * SESSIONS);
    const target = 36;
    const row = page.locator(`tr[data-session="${ids[target]}"]`);
    await row.click({ timeout: 30_000 });
    await expect.poll(() => row.getAttribute('class')).toContain('selected');
    await expect.poll(() => page.textContent('#detail h3 .name')).toBe(seniors[target]!.name);
    await expect.poll(() => page.locator('#timeline li[data-turn]').count()).toBeGreaterThan(0);
    await expect.poll(shownTurns, { timeout: TEST_MS, interval: 250 }).toBeGreaterThanOrEqual(before + 4 * SESSIONS);

    stop = true;
    await Promise.all(traffic);
    const inserted = await page.evaluate(() => (window as unknown as { inserted: { rows: number; cells: number; resized: number } }).inserted);
    expect(inserted).toEqual({ rows: 0, cells: 0, resized: 0 });
    expect(await page.locator('tr.selected').count()).toBe(1);
    for (const k of kiosks) k.close();
  }, TEST_MS);
});
