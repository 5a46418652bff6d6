import { readFile } from 'node:fs/promises';
import { chromium, type Browser, type Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestRuntime, type TestRuntime } from '../../../test/support/runtime.ts';

/** Debian's Chromium (`apt-get install -y chromium`; `npm test` installs it when missing). */
const CHROMIUM = '/usr/bin/chromium';
/** Chromium starting and rendering one second of audio offline, on a loaded machine. */
const BROWSER_TEST_MS = 120_000;
/** The worklet's frames: 20 ms at 16 kHz. */
const FRAME_SAMPLES = 320;
const AMPLITUDE = 0.5;

let rt: TestRuntime;
let browser: Browser;
let page: Page;

beforeAll(async () => {
  rt = await startTestRuntime();
  browser = await chromium.launch({ executablePath: CHROMIUM, args: ['--no-sandbox', '--disable-gpu', '--no-first-run', '--disable-background-networking', '--disable-component-update', '--disable-sync'] });
  page = await browser.newPage();
  // A document of the runtime's origin, so that the worklet loads from the URL the kiosk page uses.
  await page.goto(`${rt.url}/kiosk/client/browser/sinc-resampler.js`);
}, BROWSER_TEST_MS);
afterAll(async () => {
  await browser?.close();
  await rt?.close();
});

/**
 * The kiosk's microphone worklet (`/kiosk/client/browser/capture-worklet.ts`, the Firefox fallback: a context
 * at the device's rate) fed one second of a sine at `rate` in an offline context; the s16 frames it posts.
 */
async function capture(rate: number, hz: number): Promise<Int16Array> {
  await page.evaluate(
    async ({ rate, hz, amplitude }) => {
      const ctx = new OfflineAudioContext({ numberOfChannels: 1, length: rate, sampleRate: rate });
      await ctx.audioWorklet.addModule('/kiosk/client/browser/capture-worklet.ts');
      const node = new AudioWorkletNode(ctx, 'kohami-mic-capture', { numberOfInputs: 1, numberOfOutputs: 0, channelCount: 1, channelCountMode: 'explicit' });
      const frames: number[][] = [];
      (window as unknown as { frames16k: number[][] }).frames16k = frames;
      node.port.onmessage = (e: MessageEvent<ArrayBuffer>) => frames.push([...new Int16Array(e.data)]);
      const tone = new OscillatorNode(ctx, { type: 'sine', frequency: hz });
      tone.connect(new GainNode(ctx, { gain: amplitude })).connect(node);
      tone.start();
      await ctx.startRendering();
    },
    { rate, hz, amplitude: AMPLITUDE },
  );
  // One second at 16 kHz, less the few milliseconds the filter holds back: 49 whole frames, posted as rendered.
  const frameCount = () => page.evaluate(() => (window as unknown as { frames16k: number[][] }).frames16k.length);
  await expect.poll(frameCount, { timeout: BROWSER_TEST_MS / 2 }).toBeGreaterThanOrEqual(Math.floor(16_000 / FRAME_SAMPLES) - 1);
  return Int16Array.from((await page.evaluate(() => (window as unknown as { frames16k: number[][] }).frames16k)).flat());
}

/** Level against the input sine, in dB; the first and last 50 ms (the tone's own onset and the filter's) left out. */
function levelDb(pcm: Int16Array): number {
  const edge = 800;
  let sum = 0;
  for (let i = edge; i < pcm.length - edge; i++) sum += (pcm[i]! / 32768) ** 2;
  return 10 * Math.log10(sum / (pcm.length - 2 * edge) / (AMPLITUDE ** 2 / 2));
}

describe('the kiosk client’s capture worklet in headless Chromium, at a 48 or 44.1 kHz context', () => {
  it('loads the server’s own resampler', async () => {
    const response = await fetch(`${rt.url}/kiosk/client/browser/capture-worklet.ts`);
    // The package's TypeScript, served as JavaScript (its types stripped at start), with the pages' headers.
    expect(response.headers.get('content-type')).toBe('text/javascript; charset=utf-8');
    expect(response.headers.get('x-content-type-options')).toBe('nosniff');
    const worklet = await response.text();
    expect(worklet).toContain("import { SincResampler } from './sinc-resampler.js';");
    expect(worklet).not.toMatch(/declare const|private readonly|: number/);
    const served = await (await fetch(`${rt.url}/kiosk/client/browser/sinc-resampler.js`)).text();
    expect(served).toBe(await readFile(new URL('../../../machines/voice/sinc-resampler.js', import.meta.url), 'utf8'));
  });

  it('removes a 10 kHz tone on the way to 16 kHz (≤ −80 dB) and keeps 1 and 7 kHz whole (within 0.1 dB)', async () => {
    for (const rate of [48_000, 44_100]) {
      expect(levelDb(await capture(rate, 10_000)), `10 kHz at ${rate} Hz`).toBeLessThanOrEqual(-80);
      for (const hz of [1_000, 7_000]) expect(Math.abs(levelDb(await capture(rate, hz))), `${hz} Hz at ${rate} Hz`).toBeLessThan(0.1);
    }
  }, BROWSER_TEST_MS);
});
