import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import type { Browser } from 'playwright-core';
import { expect } from 'vitest';
import { FakeMistral } from './fake-mistral.ts';
import { FakeVoxtral } from './fake-voxtral.ts';
import { launchKioskBrowser, PAGE_ENDPOINT, REPLY, writeMicWav } from './kiosk-browser.ts';
import { startTestRuntime, type TestRuntime } from './runtime.ts';

/** How long a closed page's session may take, on a loaded machine, to close its recognizer socket. */
const SESSION_CLOSED_MS = 30_000;

export interface KioskBrowserSession {
  voxtral: FakeVoxtral;
  mistral: FakeMistral;
  rt: TestRuntime;
  browser: Browser;
  /** The session's own temporary directory (the microphone's file is in it), removed by `stop`. */
  dir: string;
  /** The fake microphone's file: writeMicWav's phrase and silence, which Chromium loops. */
  micWav: string;
  /**
   * Closes every page opened on the browser, whether its test passed or failed, and waits until the
   * runtime has closed their sessions' recognizer sockets: a page left open keeps its looping microphone
   * talking to the runtime, and a session still closing answers its last audio with the next scripted
   * words — on a loaded machine, after the next test has scripted them.
   */
  closePages(): Promise<void>;
  /** Closes the browser, the runtime and the fakes, and removes the microphone's file. */
  stop(): Promise<void>;
}

/**
 * What a /kiosk page test runs against: the real runtime with voice input, its model and speech calls
 * through the real Mistral adapters to the local fakes (the agent streams REPLY; Voxtral's shortest
 * streaming delay, 240 ms, so interim words show soon after they are said), and headless Chromium
 * whose fake microphone loops writeMicWav's phrase and silence.
 */
export async function startKioskBrowserSession(name: string, browserOptions: { autoplay?: boolean } = {}): Promise<KioskBrowserSession> {
  const voxtral = new FakeVoxtral();
  voxtral.streamingDelayMs = 240;
  const mistral = await new FakeMistral(voxtral).start();
  mistral.mode = { kind: 'stream', chunks: REPLY };
  const rt = await startTestRuntime({}, { MISTRAL_API_KEY: 'test-key', MISTRAL_BASE_URL: mistral.baseUrl, TURN_BUDGET_MS: '5000', ...PAGE_ENDPOINT });
  const dir = await mkdtemp(path.join(tmpdir(), `kohami-${name}-`));
  const micWav = await writeMicWav(dir);
  const browser = await launchKioskBrowser(micWav, browserOptions);
  return {
    voxtral,
    mistral,
    rt,
    browser,
    dir,
    micWav,
    async closePages() {
      // browser.newPage() opens each page in a context of its own.
      for (const context of browser.contexts()) await context.close();
      await expect.poll(() => voxtral.openSockets, { timeout: SESSION_CLOSED_MS }).toBe(0);
    },
    async stop() {
      await browser.close();
      await rt.close();
      await mistral.stop();
      await voxtral.stop();
      await rm(dir, { recursive: true, force: true });
    },
  };
}
