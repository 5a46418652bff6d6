import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import type { Browser, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { DEFAULT_BOUNDS, KioskClient } from '@kohami/kiosk-client';
import { headerSocket } from '@kohami/kiosk-client/node';
import { CLIENT_RECONNECT, MAX_CAPTIONS, MAX_WAITING_MESSAGES, PAGE_BACKOFF, REPLACED_WAIT_MS } from '../../runtime/kiosk/page/kiosk-reconnect.js';
import { launchKioskBrowser, writeMicWav } from '../support/kiosk-browser.ts';
import { freePort } from '../support/load-balancer.ts';
import { lowContrastText } from '../support/page-contrast.ts';
import { ADMIN_TOKEN, KIOSK_TOKEN } from '../support/runtime.ts';
import { runtimeProcess, type RuntimeProcess } from '../support/runtime-process.ts';
import { sharedDatabase, type SharedDatabase } from '../support/shared-database.ts';

/**
 * The /kiosk page left alone, against a real runtime process stopped, killed and started again on
 * the same port. The page's timers run on Playwright's clock: its waits (the client's resume, the
 * page's back-off, the wait after `replaced`) are jumped over with `runFor`, never while a connection
 * attempt is under way; everything real (sockets, the runtime starting) takes the time it takes.
 * Bounds come from kiosk-reconnect.js.
 */
const REAL_TIME_TEST_MS = 240_000;
/** The page's clock may jump this far before the next real event has to happen: one back-off step, one connection's bounds. */
const ONE_RETRY_MS = PAGE_BACKOFF.maxDelayMs + DEFAULT_BOUNDS.connectTimeoutMs + DEFAULT_BOUNDS.readyTimeoutMs;
/** What the senior reads never holds a protocol word, a code in brackets, a key name or a token. */
const NOT_FOR_SENIORS = /\b(lost|shutdown|replaced|operator|disconnected|erased|ended|token|session|error|failed|closed|refused)\b|\([a-z_]+\)|[A-Z]{2,}_[A-Z]|kiosk_|401/i;

let db: SharedDatabase;
let port: number;
let runtime: RuntimeProcess;
let browser: Browser;
let dir: string;

const startRuntime = (env: Record<string, string> = {}) => runtimeProcess(db.url, { PORT: String(port), SHUTDOWN_DRAIN_MS: '2000', ...env });

beforeAll(async () => {
  db = await sharedDatabase();
  port = await freePort();
  runtime = await startRuntime();
  dir = await mkdtemp(path.join(tmpdir(), 'kohami-kiosk-unattended-'));
  browser = await launchKioskBrowser(await writeMicWav(dir));
}, REAL_TIME_TEST_MS);
afterAll(async () => {
  await browser?.close();
  await runtime?.stop();
  await db?.stop();
  if (dir) await rm(dir, { recursive: true, force: true });
});

/** How long, in real time, a connection attempt under way may take before the test gives up on it (a loaded machine). */
const ATTEMPT_REAL_MS = 60_000;

/**
 * Every JSON frame the page's sockets receive, across all of its connections, and how many of its
 * sockets are still opening (created, not closed, no `session.ready` yet): while one is, the test does
 * not move the page's clock, so that no bound of the page fires on the runtime's real work.
 */
function watchSockets(page: Page) {
  const frames: Array<{ type: string; reason?: string }> = [];
  const opening = new Set<object>();
  let opened = 0;
  page.on('websocket', (socket) => {
    opened += 1;
    opening.add(socket);
    const settled = () => opening.delete(socket);
    socket.on('close', settled);
    socket.on('socketerror', settled);
    socket.on('framereceived', ({ payload }) => {
      if (typeof payload !== 'string') return;
      const frame = JSON.parse(payload) as { type: string; reason?: string };
      frames.push(frame);
      if (frame.type === 'session.ready' || frame.type === 'session.closed') settled();
    });
  });
  return { frames, opening: () => opening.size, opened: () => opened };
}

type Kiosk = Awaited<ReturnType<typeof openKiosk>>;

/** A page on the kiosk, its clock under the test's hand, opened with `token` and never clicked. */
async function openKiosk(viewport = { width: 800, height: 480 }, token = KIOSK_TOKEN) {
  const page = await browser.newPage({ viewport });
  const errors: string[] = [];
  page.on('pageerror', (e) => errors.push(e.message));
  await page.clock.install();
  const sockets = watchSockets(page);
  await page.goto(`${runtime.url}/kiosk?token=${token}`);
  return { page, errors, ...sockets };
}

const link = (page: Page) => page.getAttribute('#status', 'data-link');

/** Returns once no connection attempt nor audio setup is under way (those take real time): the page's socket, if it opens one, is open. */
async function settled({ page, opening }: Kiosk) {
  const since = Date.now();
  while (opening() > 0 || (await page.getAttribute('body', 'data-audio')) === 'opening') {
    if (Date.now() - since > ATTEMPT_REAL_MS) throw new Error(`a connection attempt still under way after ${ATTEMPT_REAL_MS / 1000} s; the runtime wrote:\n${runtime.output().slice(-3000)}`);
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
}

/** One second more on the page's clock, once it has settled. */
async function tick(kiosk: Kiosk) {
  await settled(kiosk);
  await kiosk.page.clock.runFor(1000);
}

/** Runs the page's clock (tick) until its header says `want`, within `clockBudgetMs` of the page's time. */
async function runUntilLink(kiosk: Kiosk, want: string, clockBudgetMs = ONE_RETRY_MS) {
  let ran = 0;
  while ((await link(kiosk.page)) !== want) {
    if (ran > clockBudgetMs) throw new Error(`the page's header says ${await link(kiosk.page)} after ${ran} ms of its clock, not ${want}; the runtime wrote:\n${runtime.output().slice(-3000)}`);
    await tick(kiosk);
    ran += 1000;
  }
}

/** What the senior can read: everything shown but the installer's panel (the page's text, less the closed dialog). */
const seniorText = (page: Page) => page.evaluate(() => [...document.querySelectorAll('header, main')].map((el) => (el as HTMLElement).innerText).join('\n'));

async function expectSeniorWordsPlain(page: Page) {
  const text = await seniorText(page);
  expect(text, text).not.toMatch(NOT_FOR_SENIORS);
}

async function adminFetch(pathname: string, init: RequestInit = {}) {
  return fetch(`${runtime.url}${pathname}`, { ...init, headers: { authorization: `Bearer ${ADMIN_TOKEN}` } });
}

describe('the /kiosk page runs unattended', () => {
  it('connects on load, rides out a 60 s outage of the runtime with no click, and sends what was typed meanwhile', async () => {
    const kiosk = await openKiosk();
    const { page, errors, frames } = kiosk;
    await page.waitForSelector('#status[data-link="connected"]', { timeout: DEFAULT_BOUNDS.connectTimeoutMs + DEFAULT_BOUNDS.readyTimeoutMs });
    expect(page.url()).toBe(`${runtime.url}/kiosk`);
    expect(await page.isVisible('#setup')).toBe(false);
    const readies = () => frames.filter((f) => f.type === 'session.ready').length;
    expect(readies()).toBe(1);

    // The runtime stops (SIGTERM: `session.closed {reason: "shutdown"}`, then nothing listens on the port).
    await runtime.stop();
    await page.waitForSelector('#status[data-link="reconnecting"]');
    expect(frames.find((f) => f.type === 'session.closed')).toMatchObject({ reason: 'shutdown' });
    await expectSeniorWordsPlain(page);

    // Typed while offline: shown at once, marked as waiting, kept; up to MAX_WAITING_MESSAGES.
    for (let i = 0; i < MAX_WAITING_MESSAGES; i++) {
      await page.fill('#typed', `bonjour ${i}`);
      await page.press('#typed', 'Enter');
      await page.locator('#captions p.you.pending', { hasText: `bonjour ${i}` }).waitFor();
    }
    // One more is refused in plain words, and stays in the field to be sent later.
    await page.fill('#typed', 'encore un');
    await page.press('#typed', 'Enter');
    expect(await page.textContent('#notice')).toContain('Des messages attendent déjà');
    expect(await page.inputValue('#typed')).toBe('encore un');
    expect(await page.locator('#captions p.you').count()).toBe(MAX_WAITING_MESSAGES);

    // A minute on the page's clock: past the client's own attempts (CLIENT_RECONNECT) and several of the page's.
    const outageMs = 60_000;
    expect(outageMs).toBeGreaterThan(CLIENT_RECONNECT.maxTotalMs + 2 * PAGE_BACKOFF.maxDelayMs);
    for (let ran = 0; ran < outageMs; ran += 1000) await tick(kiosk);
    expect(await link(page)).toBe('reconnecting');
    expect(await page.locator('#captions p.you.pending').count()).toBe(MAX_WAITING_MESSAGES);
    await expectSeniorWordsPlain(page);

    // Back on the same port: connected again within one back-off step, by itself.
    runtime = await startRuntime();
    await runUntilLink(kiosk, 'connected');
    expect(readies()).toBe(2);
    // The messages went, once each, in order, and were answered.
    await expect.poll(() => page.locator('#captions p.kohami').count()).toBe(MAX_WAITING_MESSAGES);
    expect(await page.locator('#captions p.you.pending').count()).toBe(0);
    expect(await page.locator('#captions p.you').allTextContents()).toEqual(Array.from({ length: MAX_WAITING_MESSAGES }, (_, i) => `bonjour ${i}`));
    await expectSeniorWordsPlain(page);
    expect(errors).toEqual([]);
    await page.close();
  }, REAL_TIME_TEST_MS);

  it('starts again after each end: a killed runtime (lost), an operator close, replaced by another device, a pause', async () => {
    const kiosk = await openKiosk({ width: 1280, height: 800 });
    const { page, errors, frames } = kiosk;
    await page.waitForSelector('#status[data-link="connected"]', { timeout: DEFAULT_BOUNDS.connectTimeoutMs + DEFAULT_BOUNDS.readyTimeoutMs });
    const readies = () => frames.filter((f) => f.type === 'session.ready').length;

    // lost: the process is killed, no session.closed; the client resumes, the runtime comes back.
    runtime.child.kill('SIGKILL');
    await runtime.stop();
    await page.waitForSelector('#status[data-link="reconnecting"]');
    runtime = await startRuntime();
    await runUntilLink(kiosk, 'connected');
    expect(readies()).toBe(2);
    await expectSeniorWordsPlain(page);

    // operator: an operator closes the session; a new one starts.
    const { sessions } = (await (await adminFetch('/v1/ops/sessions')).json()) as { sessions: Array<{ sessionId: string }> };
    expect(sessions).toHaveLength(1);
    expect((await adminFetch(`/v1/ops/sessions/${sessions[0]!.sessionId}/close`, { method: 'POST' })).status).toBe(200);
    await expect.poll(() => frames.some((f) => f.type === 'session.closed' && f.reason === 'operator')).toBe(true);
    await expectSeniorWordsPlain(page);
    await runUntilLink(kiosk, 'connected');
    expect(readies()).toBe(3);

    // replaced: another device takes the senior's session; once it has gone, the page takes it back after REPLACED_WAIT_MS.
    const other = new KioskClient({ url: runtime.ws, token: KIOSK_TOKEN, socket: headerSocket, reconnect: false });
    await other.connect();
    await expect.poll(() => frames.some((f) => f.type === 'session.closed' && f.reason === 'replaced')).toBe(true);
    // Not lost: the header says where the conversation went, not « Connexion perdue ».
    await expect.poll(() => link(page)).toBe('elsewhere');
    expect(await page.textContent('#status')).toBe('Sur un autre appareil');
    expect(await page.textContent('#notice')).toContain('autre appareil');
    await expectSeniorWordsPlain(page);
    other.close();
    // Not before the wait: two pages on one token take turns, not a tight loop. No socket opens meanwhile.
    const openedBefore = kiosk.opened();
    await page.clock.runFor(REPLACED_WAIT_MS - 2000);
    await settled(kiosk);
    expect(kiosk.opened() - openedBefore).toBe(0);
    expect(await link(page)).toBe('elsewhere');
    expect(readies()).toBe(3);
    await runUntilLink(kiosk, 'connected');
    expect(readies()).toBe(4);

    // pause: a runtime whose sessions pause after 2 s of quiet; the page starts a new one, quietly.
    await runtime.stop();
    runtime = await startRuntime({ SESSION_PAUSE_MS: '2000' });
    await runUntilLink(kiosk, 'connected');
    await expect.poll(() => frames.some((f) => f.type === 'session.closed' && f.reason === 'pause'), { timeout: 60_000 }).toBe(true);
    // Quietly: a new conversation is starting, nothing was lost.
    await expect.poll(() => link(page)).toBe('connecting');
    const afterPause = frames.map((f) => f.type === 'session.closed' && f.reason === 'pause').lastIndexOf(true);
    await expect.poll(async () => (await tick(kiosk), frames.slice(afterPause).some((f) => f.type === 'session.ready')), { timeout: 60_000 }).toBe(true);
    await expectSeniorWordsPlain(page);
    await runtime.stop();
    runtime = await startRuntime();
    expect(errors).toEqual([]);
    await page.close();
  }, REAL_TIME_TEST_MS);

  it(`keeps the last ${MAX_CAPTIONS} captions, however long it runs`, async () => {
    const kiosk = await openKiosk();
    const { page, errors } = kiosk;
    await page.waitForSelector('#status[data-link="connected"]', { timeout: DEFAULT_BOUNDS.connectTimeoutMs + DEFAULT_BOUNDS.readyTimeoutMs });
    // Each turn is two lines (the senior's, Kohami's): more turns than the page keeps lines.
    const turns = MAX_CAPTIONS / 2 + 3;
    for (let i = 0; i < turns; i++) {
      await page.fill('#typed', `message ${i}`);
      await page.press('#typed', 'Enter');
      await expect.poll(() => page.locator('#captions p.kohami').last().evaluate((p) => p.previousElementSibling?.textContent)).toBe(`message ${i}`);
    }
    expect(await page.locator('#captions p').count()).toBe(MAX_CAPTIONS);
    // The newest stay, the oldest went.
    expect(await page.locator('#captions p.you').last().textContent()).toBe(`message ${turns - 1}`);
    expect(await page.locator('#captions p.you', { hasText: /^message 0$/ }).count()).toBe(0);
    expect(errors).toEqual([]);
    await page.close();
  }, REAL_TIME_TEST_MS);

  it('a refused token is said in the setup panel, not to the senior', async () => {
    const kiosk = await openKiosk({ width: 800, height: 480 }, 'kiosk_not_a_known_token');
    const { page, errors } = kiosk;
    await page.waitForSelector('#status[data-link="setup"]', { timeout: DEFAULT_BOUNDS.connectTimeoutMs + DEFAULT_BOUNDS.readyTimeoutMs });
    // The senior reads that the kiosk needs its installer; nothing about tokens or codes.
    expect(await page.textContent('#notice')).toContain('réglée');
    await expectSeniorWordsPlain(page);
    expect(await page.isDisabled('#typed')).toBe(true);
    // The installer opens « Réglages »: the refusal, by name.
    await page.click('#open-setup');
    expect(await page.textContent('#setup-status')).toContain('Jeton refusé');
    expect(await page.textContent('#setup-status')).toContain('401');
    expect(await page.inputValue('#token')).toBe('kiosk_not_a_known_token');
    expect(await page.evaluate(lowContrastText, 4.5)).toEqual([]);
    // The panel fits the small screen, its field as wide as the panel's text.
    const panel = (await page.locator('#setup').boundingBox())!;
    for (const id of ['#token', '#save-token', '#close-setup']) {
      const box = (await page.locator(id).boundingBox())!;
      expect(box.y + box.height, id).toBeLessThanOrEqual(480);
    }
    expect((await page.locator('#token').boundingBox())!.width).toBeGreaterThan(panel.width / 2);
    // What the page asked: the runtime knows a token (204) or not (401), as its upgrade would answer.
    const check = (token?: string) => fetch(`${runtime.url}/kiosk/token-check`, token ? { headers: { authorization: `Bearer ${token}` } } : {}).then((r) => r.status);
    expect([await check(KIOSK_TOKEN), await check('kiosk_not_a_known_token'), await check()]).toEqual([204, 401, 401]);
    // The right token, saved: connected, and the panel says so.
    await page.fill('#token', KIOSK_TOKEN);
    await page.click('#save-token');
    await runUntilLink(kiosk, 'connected');
    expect(await page.textContent('#setup-status')).toBe('Connectée.');
    expect(await page.evaluate(() => localStorage.getItem('kohami-kiosk-token'))).toBe(KIOSK_TOKEN);
    // The browser restarts on its start address, the old token in it: the saved one stays.
    await page.goto(`${runtime.url}/kiosk?token=kiosk_not_a_known_token`);
    await runUntilLink(kiosk, 'connected');
    expect(await page.evaluate(() => localStorage.getItem('kohami-kiosk-token'))).toBe(KIOSK_TOKEN);
    expect(errors).toEqual([]);
    await page.close();
  }, REAL_TIME_TEST_MS);

  it('with no token at all, the setup panel opens by itself and asks for one', async () => {
    const page = await browser.newPage({ viewport: { width: 800, height: 480 } });
    await page.goto(`${runtime.url}/kiosk`);
    await page.waitForSelector('#setup[open]');
    expect(await page.getAttribute('#status', 'data-link')).toBe('setup');
    expect(await page.textContent('#setup-status')).toContain('Saisissez le jeton');
    await page.close();
  }, REAL_TIME_TEST_MS);

  for (const viewport of [{ width: 800, height: 480 }, { width: 1280, height: 800 }]) {
    it(`at ${viewport.width}×${viewport.height}: one-line header, every control in view, AA contrast, disabled controls plainly so`, async () => {
      const kiosk = await openKiosk(viewport);
      const { page, errors } = kiosk;
      await page.waitForSelector('#status[data-link="connected"]', { timeout: DEFAULT_BOUNDS.connectTimeoutMs + DEFAULT_BOUNDS.readyTimeoutMs });
      // More captions than the screen holds: they scroll, the controls stay.
      for (let i = 0; i < 6; i++) {
        await page.fill('#typed', `bonjour ${i}`);
        await page.press('#typed', 'Enter');
        await expect.poll(() => page.locator('#captions p.kohami').count(), { timeout: 30_000 }).toBe(i + 1);
      }
      const inView = async () => {
        for (const id of ['#state', '#mic', '#interrupt', '#typed', '#send', '#open-setup', '#status']) {
          const box = (await page.locator(id).boundingBox())!;
          expect(box, id).not.toBeNull();
          expect(box.x, id).toBeGreaterThanOrEqual(0);
          expect(box.y, id).toBeGreaterThanOrEqual(0);
          expect(box.x + box.width, id).toBeLessThanOrEqual(viewport.width);
          expect(box.y + box.height, id).toBeLessThanOrEqual(viewport.height);
        }
        expect(await page.evaluate(() => document.scrollingElement!.scrollHeight)).toBeLessThanOrEqual(viewport.height);
      };
      await inView();
      // The header is one line: as tall as its title and padding, not wrapped.
      const header = (await page.locator('header').boundingBox())!;
      const title = (await page.locator('header h1').boundingBox())!;
      expect(header.height).toBeLessThan(2 * title.height);
      expect(await page.evaluate(lowContrastText, 4.5)).toEqual([]);

      // Offline runtime: no voice input, so the microphone button is disabled; it looks it (not faded, dashed, grey).
      expect(await page.isDisabled('#mic')).toBe(true);
      const look = (id: string) => page.$eval(id, (el) => ({ border: getComputedStyle(el).borderTopStyle, background: getComputedStyle(el).backgroundColor, opacity: getComputedStyle(el).opacity }));
      const [disabled, enabled] = [await look('#mic'), await look('#send')];
      expect(disabled.border).toBe('dashed');
      expect(enabled.border).toBe('solid');
      expect(disabled.background).not.toBe(enabled.background);
      expect(disabled.opacity).toBe('1');

      // Reconnecting: the same, in the header's other colour.
      await runtime.stop();
      await page.waitForSelector('#status[data-link="reconnecting"]');
      await inView();
      expect(await page.evaluate(lowContrastText, 4.5)).toEqual([]);
      runtime = await startRuntime();
      await runUntilLink(kiosk, 'connected');
      expect(errors).toEqual([]);
      await page.close();
    }, REAL_TIME_TEST_MS);
  }
});
