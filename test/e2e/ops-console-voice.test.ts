import type { Browser, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { generateToken } from '../../adapters/postgres/tokens.ts';
import { FakeMistral } from '../support/fake-mistral.ts';
import { FakeVoxtral } from '../support/fake-voxtral.ts';
import { KioskClient } from '../support/kiosk-client.ts';
import { controllableModel } from '../support/models.ts';
import { KIOSK_TOKEN, startTestRuntime, type TestRuntime } from '../support/runtime.ts';
import { concat, frenchSpeech, silence } from '../support/speech.ts';
import { VoiceKiosk } from '../support/voice-kiosk.ts';
import { QUICK_ENDPOINT } from '../support/endpointing.ts';
import { layoutFaults, launchConsoleBrowser, openConsole } from '../support/ops-console-page.ts';

/**
 * Chromium, a runtime and the reply's audio at its own pace: real time, stretched by a loaded machine.
 * Each wait is on a frame or on the page's state; this bounds the whole, generously.
 */
const REAL_TIME_TEST_MS = 180_000;
/** The view's stage fields, by the metric's stage label the console puts in `data-stage`. */
const STAGE_FIELDS = { endpointing: 'endpointingMs', transcription: 'transcriptionMs', first_token: 'firstTokenMs', first_audio: 'firstAudioMs' } as const;

let voxtral: FakeVoxtral;
let mistral: FakeMistral;
let rt: TestRuntime;
let browser: Browser;
let page: Page;
let operator: string;
let speech: Int16Array;
// No sentence end in the first chunk: no audio (the voice state stays `thinking`) until the test releases the rest.
const model = controllableModel(['Le marché du samedi ', 'est un vrai plaisir. On y trouve des fruits et des fleurs de saison.']);

beforeAll(async () => {
  voxtral = new FakeVoxtral();
  mistral = await new FakeMistral(voxtral).start();
  // The held reply must not count as a stalled model while the page is polled, however slow the
  // machine: the stall (AGENT_STALL_MS, below REPLY_MAX_MS) is longer than the test may take.
  rt = await startTestRuntime(
    { agentModel: model },
    { MISTRAL_API_KEY: 'test-key', MISTRAL_BASE_URL: mistral.baseUrl, ...QUICK_ENDPOINT, AGENT_STALL_MS: String(REAL_TIME_TEST_MS), REPLY_MAX_MS: String(2 * REAL_TIME_TEST_MS) },
  );
  operator = generateToken('operator');
  await rt.directory.addApiToken('operator', operator, 'console');
  speech = concat([silence(200), await frenchSpeech('Je suis allée au marché ce matin avec ma fille.'), silence(1000)]);
  browser = await launchConsoleBrowser();
}, REAL_TIME_TEST_MS);
afterAll(async () => {
  await browser?.close();
  await rt?.close();
  await mistral?.stop();
  await voxtral?.stop();
});

const opsGet = (route: string) => fetch(`${rt.url}${route}`, { headers: { authorization: `Bearer ${operator}` } }).then((r) => r.json() as Promise<Record<string, any>>); // eslint-disable-line @typescript-eslint/no-explicit-any

/** The stage timings a row shows, by stage: each must be a whole number of milliseconds, nothing else. */
async function shownStages(scope: ReturnType<Page['locator']>): Promise<Record<string, number>> {
  const cells = await scope.locator('[data-stage]').evaluateAll((els) => els.map((e) => [(e as HTMLElement).dataset.stage!, e.querySelector('.ms')?.textContent ?? ''] as const));
  return Object.fromEntries(
    cells.map(([stage, ms]) => {
      expect(ms).toMatch(/^\d+$/);
      return [stage, Number(ms)];
    }),
  );
}

describe('operator console (/ops): voice sessions', () => {
  it('shows each voice session’s voice state and its last turn’s stage timings, in the row and the detail', async () => {
    page = await openConsole(browser, rt.url, operator);

    // A text kiosk beside it: no voice state, no stages.
    const text = await KioskClient.connect(rt.wsUrl, KIOSK_TOKEN);
    const textReady = await text.start();
    const textRow = page.locator(`tr[data-session="${textReady.sessionId}"]`);
    await textRow.waitFor();
    expect(await textRow.locator('td.voice').textContent()).toBe('');
    expect(await textRow.locator('[data-stage]').count()).toBe(0);
    text.close();

    voxtral.utterances.push({ text: 'Je suis allée au marché ce matin avec ma fille' });
    const k = await VoiceKiosk.connect(rt.wsUrl, KIOSK_TOKEN);
    const ready = await k.start(true, 24_000);
    const row = page.locator(`tr[data-session="${ready.sessionId}"]`);
    const voice = row.locator('td.voice');
    await expect.poll(() => voice.getAttribute('data-voice')).toBe('listening');
    expect(await voice.textContent()).toBe('écoute');

    const speaking = k.speak(speech);
    await expect.poll(() => voice.getAttribute('data-voice')).toBe('user_speaking');
    await speaking;
    await k.next('transcript.final', 0);
    // The model holds its reply: thinking, with the endpointing and transcription timings already there.
    await expect.poll(() => voice.getAttribute('data-voice')).toBe('thinking');
    await expect.poll(() => shownStages(row)).toEqual({ endpointing: expect.any(Number), transcription: expect.any(Number) });

    model.release();
    await k.next((f) => f.type === 'reply.audio.start', 0);
    await expect.poll(() => voice.getAttribute('data-voice')).toBe('speaking');
    await expect.poll(async () => Object.keys(await shownStages(row))).toContain('first_audio');

    // The numbers are the view's own, in the list and the detail routes alike.
    const detail = await opsGet(`/v1/ops/sessions/${String(ready.sessionId)}`);
    const listed = (await opsGet('/v1/ops/sessions')).sessions.find((s: { sessionId: string }) => s.sessionId === ready.sessionId);
    expect(listed.voice).toEqual(detail.voice);
    const stages = detail.voice.stages as Record<string, unknown>;
    expect(stages.turnId).toBe('v1');
    const expected = Object.fromEntries(Object.entries(STAGE_FIELDS).filter(([, field]) => stages[field] !== undefined).map(([stage, field]) => [stage, stages[field]]));
    expect(Object.keys(expected)).toEqual(expect.arrayContaining(['endpointing', 'transcription', 'first_audio']));
    expect(await shownStages(row)).toEqual(expected);

    // The detail panel: the voice state and one table row per measured stage.
    await row.click();
    await page.waitForSelector('#voice-stages');
    expect(await page.textContent('#voice-state')).toContain('speaking');
    expect(await page.textContent('#voice-stages caption')).toContain('v1');
    expect(await shownStages(page.locator('#voice-stages'))).toEqual(expected);
    // Its widest row (a voice session with every stage's timing) still fits 1280 px, « Fermer » in view.
    expect(await layoutFaults(page)).toEqual([]);

    // Once the reply has played, back to listening; the last turn's timings stay shown.
    await expect.poll(() => voice.getAttribute('data-voice')).toBe('listening');
    expect(await shownStages(row)).toEqual(expected);
    k.close();
  }, REAL_TIME_TEST_MS);
});
