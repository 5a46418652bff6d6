import pg from 'pg';
import type { Browser, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { SeniorDirectory } from '../../adapters/postgres/senior-directory.ts';
import { generateToken } from '../../adapters/postgres/tokens.ts';
import { KioskClient } from '../support/kiosk-client.ts';
import { freePort } from '../support/load-balancer.ts';
import { launchConsoleBrowser, openConsole } from '../support/ops-console-page.ts';
import { KIOSK_TOKEN } from '../support/runtime.ts';
import { runtimeProcess, type RuntimeProcess } from '../support/runtime-process.ts';
import { sharedDatabase, type SharedDatabase } from '../support/shared-database.ts';

/** Two process starts, a drain and the console's back-off (its retries are 10 s apart at most): generous. */
const TEST_MS = 180_000;

let wire: SharedDatabase;
let port: number;
const processes: RuntimeProcess[] = [];
let db: pg.Pool;
let operator: string;
let browser: Browser;
let page: Page;

/** The runtime on the console's own address, as a restart or a redeploy brings it back. */
async function start(): Promise<RuntimeProcess> {
  const p = await runtimeProcess(wire.url, { PORT: String(port), PRESENCE_HEARTBEAT_MS: '500' });
  processes.push(p);
  return p;
}

beforeAll(async () => {
  wire = await sharedDatabase();
  port = await freePort();
  await start();
  db = new pg.Pool({ connectionString: wire.url, max: 1 });
  operator = generateToken('operator');
  await new SeniorDirectory(db).addApiToken('operator', operator, 'ops');
  browser = await launchConsoleBrowser();
}, TEST_MS);
afterAll(async () => {
  await browser?.close();
  for (const p of processes) await p.stop();
  await db?.end();
  await wire?.stop();
});

describe('operator console (/ops) through a runtime restart', () => {
  it('reconnects by itself and shows the kiosks that came back, without a click', async () => {
    const first = processes[0]!;
    page = await openConsole(browser, first.url, operator);
    const before = await KioskClient.connect(first.ws, KIOSK_TOKEN);
    const old = String((await before.start()).sessionId);
    await page.locator(`tr[data-session="${old}"]`).waitFor();

    // The runtime stops (SIGTERM: its sessions close with `shutdown`); the console says it is retrying.
    await first.stop();
    await page.waitForSelector('#status.retry');
    expect(await page.textContent('#status')).toMatch(/^hors ligne — nouvel essai dans \d+ s$/);

    // Back on the same address: the kiosk starts a new session there; the console finds it by itself.
    const second = await start();
    const after = await KioskClient.connect(second.ws, KIOSK_TOKEN);
    const fresh = String((await after.start()).sessionId);
    await page.waitForSelector('#status.ok', { timeout: TEST_MS });
    const row = page.locator(`tr[data-session="${fresh}"]`);
    await row.waitFor({ timeout: TEST_MS });
    await expect.poll(() => row.locator('td.senior .name').textContent()).toBe('Marie Dupont');
    // The first process's session is gone from the table; the new one is live: a turn shows.
    expect(await page.locator(`tr[data-session="${old}"]`).count()).toBe(0);
    expect(await after.turn('r1', 'bonjour')).toMatchObject({ flux: 'cache' });
    await expect.poll(() => row.locator('td.turns').textContent()).toBe('1');
    expect(await page.locator('#rows tr').count()).toBe(1);
    before.close();
    after.close();
  }, TEST_MS);
});
