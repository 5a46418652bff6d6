import { chromium, type Browser, type Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { generateToken } from '../../adapters/postgres/tokens.ts';
import { KioskClient } from '../support/kiosk-client.ts';
import { controllableModel } from '../support/models.ts';
import { KIOSK_TOKEN, startTestRuntime, type TestRuntime } from '../support/runtime.ts';

/** Debian's Chromium (`apt-get install -y chromium`; `npm test` installs it when missing). */
const CHROMIUM = '/usr/bin/chromium';

let rt: TestRuntime;
let browser: Browser;
let page: Page;
let operator: string;
const consoleErrors: string[] = [];
const model = controllableModel(['Il était ', 'une fois.']);

beforeAll(async () => {
  rt = await startTestRuntime({ agentModel: model });
  operator = generateToken('operator');
  await rt.directory.addApiToken('operator', operator, 'console');
  browser = await chromium.launch({
    executablePath: CHROMIUM,
    args: ['--no-sandbox', '--disable-gpu', '--disable-quic', '--no-first-run', '--disable-background-networking', '--disable-component-update', '--disable-sync'],
  });
  page = await browser.newPage();
  page.on('console', (m) => m.type() === 'error' && consoleErrors.push(m.text()));
}, 60_000);
afterAll(async () => {
  await browser?.close();
  await rt?.close();
});

describe('operator console (/ops) in headless Chromium', () => {
  it('shows a live session appear, its state change, its machine, and closes it from the page', async () => {
    await page.goto(`${rt.url}/ops`);
    await page.fill('#token', operator);
    await page.click('#connect');
    await page.waitForSelector('#status.ok');

    const kiosk = await KioskClient.connect(rt.wsUrl, KIOSK_TOKEN);
    const ready = await kiosk.start();
    const row = page.locator(`tr[data-session="${ready.sessionId}"]`);
    await row.waitFor();
    expect(await row.locator('td').nth(2).textContent()).toContain('conversation.idle');

    // A reply in progress: the row shows the turn in the agent flux, then back to idle.
    kiosk.send({ type: 'turn', turnId: 'c1', transcript: 'raconte-moi une histoire' });
    await kiosk.next('reply.delta');
    await expect.poll(() => row.locator('td').nth(2).textContent()).toContain('conversation.turn.agent');
    expect(await row.locator('td').nth(3).textContent()).toBe('agent');
    model.release();
    await kiosk.next('reply.done');
    await expect.poll(() => row.locator('td').nth(4).textContent()).toBe('1');

    // The detail panel draws the machine's states with the current ones highlighted, and the latency chart.
    await row.click();
    await page.waitForSelector('#detail [data-state="conversation.idle"].active');
    expect(await page.locator('#detail [data-state="connection.attached"]').getAttribute('class')).toContain('active');
    expect(await page.locator('#detail [data-state="conversation.turn.agent"]').getAttribute('class')).not.toContain('active');
    expect(await page.locator('#latency-chart rect').count()).toBe(1);

    // Filters: a flux filter that matches nothing hides the row.
    await page.selectOption('#filter-flux', 'sos');
    await expect.poll(() => row.count()).toBe(0);
    await page.selectOption('#filter-flux', '');
    await row.waitFor();

    await row.locator('button.close').click();
    expect(await kiosk.next('session.closed')).toMatchObject({ reason: 'operator' });
    await expect.poll(() => row.count()).toBe(0);
    kiosk.close();
    // The page works under its Content-Security-Policy: no script or style of its own was refused.
    expect(consoleErrors.filter((e) => /Content Security Policy/i.test(e))).toEqual([]);
  });

  it('refuses a wrong token on the page', async () => {
    const fresh = await browser.newPage();
    await fresh.goto(`${rt.url}/ops`);
    await fresh.fill('#token', 'operator_not_a_token');
    await fresh.click('#connect');
    await fresh.waitForSelector('#status.ko');
    expect(await fresh.textContent('#status')).toContain('401');
    await fresh.close();
  });
});
