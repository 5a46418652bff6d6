import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { DEFAULT_BOUNDS } from '@kohami/kiosk-client';
import { VOICE_SETUP_MS } from '../../runtime/kiosk/page/kiosk-reconnect.js';
import { startKioskBrowserSession, type KioskBrowserSession } from '../support/kiosk-browser-session.ts';
import { recordInPage, REPLY } from '../support/kiosk-browser.ts';
import { adminApi, KIOSK_TOKEN } from '../support/runtime.ts';

/**
 * The /kiosk page in a Chromium nobody set up for it: its own autoplay policy, under which no sound
 * may play before the page is touched (the audio setup's `resume()` never settles). The page must
 * still connect at once and answer what is typed, and turn its voice on at the first click.
 */
const REAL_TIME_TEST_MS = 180_000;
/** The audio setup's bound, then the client's connection and session.ready. */
const CONNECTED_MS = VOICE_SETUP_MS + DEFAULT_BOUNDS.connectTimeoutMs + DEFAULT_BOUNDS.readyTimeoutMs;

let session: KioskBrowserSession;

beforeAll(async () => {
  session = await startKioskBrowserSession('kiosk-gesture', { autoplay: false });
}, REAL_TIME_TEST_MS);
afterEach(() => session?.closePages());
afterAll(() => session?.stop());

describe('the /kiosk page without an autoplay exemption', () => {
  it('connects in text at once, answers a typed turn, and sets its voice up on the first click', async () => {
    const page = await session.browser.newPage({ viewport: { width: 800, height: 480 } });
    const errors: string[] = [];
    page.on('pageerror', (e) => errors.push(e.message));
    const inPage = await recordInPage(page);
    const sent = async () => (await inPage()).filter((l) => l.dir === 'out').map((l) => l.frame);
    await page.goto(`${session.rt.url}/kiosk?token=${KIOSK_TOKEN}&codec=pcm`);

    // The token leaves the address; the other settings stay for a reload.
    expect(page.url()).toBe(`${session.rt.url}/kiosk?codec=pcm`);
    await page.waitForSelector('#status[data-link="connected"]', { timeout: CONNECTED_MS });
    expect(await page.getAttribute('body', 'data-audio')).toBe('blocked');
    expect(await page.textContent('#notice')).toContain('Touchez l’écran');
    expect((await sent()).filter((f) => f.type === 'session.start')).toEqual([expect.not.objectContaining({ mode: 'voice' })]);

    // Typed on the keyboard (no tap): answered in text.
    await page.fill('#typed', 'raconte-moi une histoire');
    await page.press('#typed', 'Enter');
    await page.locator('#captions p.kohami', { hasText: REPLY[0]!.trim() }).waitFor();
    expect(await page.getAttribute('#status', 'data-link')).toBe('connected');

    // The first click lets the browser play: the same session, asked back with voice.
    await page.click('#captions');
    await page.waitForSelector('body[data-audio="on"]', { timeout: CONNECTED_MS });
    await page.waitForSelector('#status[data-link="connected"]', { timeout: CONNECTED_MS });
    const starts = (await sent()).filter((f) => f.type === 'session.start');
    expect(starts.at(-1)).toMatchObject({ mode: 'voice', resume: true });
    await expect.poll(() => page.getAttribute('#state', 'data-state'), { timeout: CONNECTED_MS }).toMatch(/^(listening|user_speaking|thinking|speaking)$/);
    expect(await page.textContent('#notice')).not.toContain('Touchez');
    expect(errors).toEqual([]);
  }, REAL_TIME_TEST_MS);

  // Last in this file: the senior's data is erased for good.
  it('sends the page to « Réglages » when the senior\'s data is erased, and stops there', async () => {
    const page = await session.browser.newPage({ viewport: { width: 800, height: 480 } });
    const errors: string[] = [];
    page.on('pageerror', (e) => errors.push(e.message));
    let opened = 0;
    page.on('websocket', () => (opened += 1));
    await page.goto(`${session.rt.url}/kiosk?token=${KIOSK_TOKEN}`);
    await page.waitForSelector('#status[data-link="connected"]', { timeout: CONNECTED_MS });
    const api = adminApi(session.rt);
    const { body } = await api('GET', '/v1/ops/sessions');
    expect(body.sessions).toHaveLength(1);
    expect((await api('DELETE', `/v1/admin/seniors/${body.sessions[0].seniorId}/data`)).status).toBe(200);

    await page.waitForSelector('#status[data-link="setup"]');
    // The senior reads that the kiosk needs its installer; the panel says why, and typing stops.
    expect(await page.textContent('#notice')).toContain('réglée');
    expect(await page.isDisabled('#typed')).toBe(true);
    expect(await page.getAttribute('#setup-status', 'data-level')).toBe('erased');
    expect(await page.textContent('#setup-status')).toContain('effacées');
    // No new attempt: the page waits for another token.
    expect(opened).toBe(1);
    expect(errors).toEqual([]);
  }, REAL_TIME_TEST_MS);
});
