import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import type { Browser } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { freePort } from '../../../test/support/load-balancer.ts';
import { launchKioskBrowser, writeMicWav } from '../../../test/support/kiosk-browser.ts';
import { KIOSK_TOKEN, startTestRuntime, type TestRuntime } from '../../../test/support/runtime.ts';

/**
 * In a browser, whose WebSocket closes a refused upgrade with the same 1006 as an unreachable host:
 * the client (its modules as the runtime serves them, default socket, token as ?token=) still tells
 * a refused token from a runtime it cannot reach, in headless Chromium against the real runtime.
 */
const BROWSER_TEST_MS = 120_000;
let rt: TestRuntime;
let browser: Browser;
let dir: string;

beforeAll(async () => {
  rt = await startTestRuntime();
  dir = await mkdtemp(path.join(tmpdir(), 'kohami-kc-refused-'));
  browser = await launchKioskBrowser(await writeMicWav(dir));
}, BROWSER_TEST_MS);

afterAll(async () => {
  await browser?.close();
  await rt?.close();
  if (dir) await rm(dir, { recursive: true, force: true });
});

describe('the client in Chromium, default socket', () => {
  it('a refused token: refused with HTTP 401; a closed port: connect_failed; a known token: ready', async () => {
    const page = await browser.newPage();
    // A document of the runtime's origin, which serves the package's modules.
    await page.goto(`${rt.url}/kiosk/client/index.ts`);
    const closedPort = await freePort();
    // A string, not a function: vitest would rewrite the function's import() for Node.
    const outcomes = (await page.evaluate(`(async () => {
      const { KioskClient } = await import('/kiosk/client/index.ts');
      const attempt = async (url, token) => {
        const client = new KioskClient({ url, token, reconnect: false });
        try {
          const ready = await client.connect();
          client.close();
          return { code: 'ready', resumed: ready.resumed };
        } catch (err) {
          return { code: err.code, status: err.status ?? null };
        }
      };
      const kiosk = ${JSON.stringify(rt.wsUrl)};
      return [
        await attempt(kiosk, 'kiosk_nobody_0000'),
        await attempt('ws://127.0.0.1:${closedPort}/v1/kiosk', ${JSON.stringify(KIOSK_TOKEN)}),
        await attempt(kiosk, ${JSON.stringify(KIOSK_TOKEN)}),
      ];
    })()`)) as Array<Record<string, unknown>>;
    expect(outcomes).toEqual([
      { code: 'refused', status: 401 },
      { code: 'connect_failed', status: null },
      { code: 'ready', resumed: false },
    ]);
    await page.close();
  }, BROWSER_TEST_MS);
});
