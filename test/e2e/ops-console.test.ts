import type { Browser, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { generateToken } from '../../adapters/postgres/tokens.ts';
import { KioskClient } from '../support/kiosk-client.ts';
import { controllableModel, hangingModel, streamingModel, switchableModel } from '../support/models.ts';
import { layoutFaults, launchConsoleBrowser, namedSeniors, openConsole, recordOpsFrames } from '../support/ops-console-page.ts';
import { KIOSK_TOKEN, startTestRuntime, type TestRuntime } from '../support/runtime.ts';

/** Said by the senior and by the agent in the timeline test: it must never reach the console. */
const CANARY = 'le-hibou-canari-7741';

let rt: TestRuntime;
let browser: Browser;
let page: Page;
let operator: string;
const consoleErrors: string[] = [];
const model = controllableModel(['Il était ', 'une fois.']);
const agent = switchableModel(model);

beforeAll(async () => {
  rt = await startTestRuntime({ agentModel: agent });
  operator = generateToken('operator');
  await rt.directory.addApiToken('operator', operator, 'console');
  browser = await launchConsoleBrowser();
  page = await openConsole(browser, rt.url, operator);
  page.on('console', (m) => m.type() === 'error' && consoleErrors.push(m.text()));
}, 60_000);
afterAll(async () => {
  await browser?.close();
  await rt?.close();
});

const opsGet = (route: string) => fetch(`${rt.url}${route}`, { headers: { authorization: `Bearer ${operator}` } }).then((r) => r.json() as Promise<Record<string, any>>); // eslint-disable-line @typescript-eslint/no-explicit-any

describe('operator console (/ops) in headless Chromium', () => {
  it('shows a live session by its senior’s name, its state in words, its machine, and closes it from the page', async () => {
    const kiosk = await KioskClient.connect(rt.wsUrl, KIOSK_TOKEN);
    const ready = await kiosk.start();
    const row = page.locator(`tr[data-session="${ready.sessionId}"]`);
    await row.waitFor();
    // The seeded demo senior, by the name she was registered under.
    await expect.poll(() => row.locator('td.senior .name').textContent()).toBe('Marie Dupont');
    const state = row.locator('td.state');
    /** The state as the row says it: what the session does, and the detail under it. */
    const words = async () => [await state.locator('.main').textContent(), (await state.locator('.more').textContent())!.trim()];
    expect(await words()).toEqual(['en attente', '']);
    expect(await state.getAttribute('data-state')).toContain('conversation.idle');

    // A reply in progress: the row says so in words, in the agent flux, then back to waiting.
    kiosk.send({ type: 'turn', turnId: 'c1', transcript: 'raconte-moi une histoire' });
    await kiosk.next('reply.delta');
    await expect.poll(words).toEqual(['répond', 'le modèle écrit']);
    expect(await row.locator('td.flux').textContent()).toBe('agent');
    model.release();
    await kiosk.next('reply.done');
    await expect.poll(() => row.locator('td.turns').textContent()).toBe('1');
    expect(await words()).toEqual(['en attente', '']);

    // The detail panel draws the machine's states with the current ones highlighted, and the latency chart.
    await row.click();
    await page.waitForSelector('#detail [data-state="conversation.idle"].active');
    expect(await page.locator('#detail [data-state="connection.attached"]').getAttribute('class')).toContain('active');
    expect(await page.locator('#detail [data-state="conversation.turn.agent"]').getAttribute('class')).not.toContain('active');
    expect(await page.locator('#latency-chart rect').count()).toBe(1);
    expect(await page.textContent('#detail h3 .name')).toBe('Marie Dupont');

    // Filters: a flux filter that matches nothing hides the row; the state filter speaks words too.
    await page.selectOption('#filter-flux', 'sos');
    await expect.poll(() => row.isHidden()).toBe(true);
    await page.selectOption('#filter-flux', '');
    await expect.poll(() => row.isVisible()).toBe(true);
    await page.selectOption('#filter-state', { label: 'répond' });
    await expect.poll(() => row.isHidden()).toBe(true);
    await page.selectOption('#filter-state', '');

    await row.locator('button.close').click();
    expect(await kiosk.next('session.closed')).toMatchObject({ reason: 'operator' });
    await expect.poll(() => row.count()).toBe(0);
    kiosk.close();
    // The page works under its Content-Security-Policy: no script or style of its own was refused.
    expect(consoleErrors.filter((e) => /Content Security Policy/i.test(e))).toEqual([]);
  });

  it('shows one session’s turns — flux, latency, SOS, barge-in — and never a word of them', async () => {
    const watcher = await browser.newPage({ viewport: page.viewportSize()! });
    const frames = recordOpsFrames(watcher);
    const bodies: string[] = [];
    watcher.on('response', (res) => void (res.url().includes('/v1/ops/') ? res.text().then((t) => bodies.push(t), () => {}) : undefined));
    await watcher.goto(`${rt.url}/ops`);
    await watcher.fill('#token', operator);
    await watcher.click('#connect');
    await watcher.waitForSelector('#status.ok');

    const kiosk = await KioskClient.connect(rt.wsUrl, KIOSK_TOKEN);
    const ready = await kiosk.start();
    const row = watcher.locator(`tr[data-session="${ready.sessionId}"]`);
    await row.click();
    // 1: the agent says the canary back; 2: the cache; 3: a barge-in; 4: a model that never answers (SOS, budget).
    agent.use(streamingModel([`Bien sûr, ${CANARY}.`]));
    expect(await kiosk.turn('t1', `retiens ${CANARY} pour moi`)).toMatchObject({ flux: 'agent' });
    expect(await kiosk.turn('t2', 'bonjour')).toMatchObject({ flux: 'cache' });
    const held = controllableModel([`Il était ${CANARY} `, 'une fois.']);
    agent.use(held);
    kiosk.send({ type: 'turn', turnId: 't3', transcript: `raconte ${CANARY}` });
    await kiosk.next('reply.delta');
    kiosk.send({ type: 'interrupt', turnId: 't3' });
    expect(await kiosk.next('reply.done')).toMatchObject({ interrupted: true });
    held.release();
    agent.use(hangingModel());
    expect(await kiosk.turn('t4', `tu es là ${CANARY} ?`)).toMatchObject({ flux: 'sos' });

    const turns = watcher.locator('#timeline li');
    // Four rows, each a finished turn (its flux known): a turn's row appears when it starts, its flux when it ends.
    await expect.poll(() => watcher.locator('#timeline li[data-flux]').count()).toBe(4);
    expect(await turns.count()).toBe(4);
    const timeline = await opsGet(`/v1/ops/sessions/${String(ready.sessionId)}/timeline`);
    expect(timeline.turns.map((t: Record<string, unknown>) => Object.keys(t).sort())).toEqual(Array(4).fill(['flux', 'interrupted', 'latencyMs', 'n', 'sosReason', 'startedAt']));
    // Newest first: the SOS, the barge-in, the cache, the agent; each with the timeline's own latency.
    const shown = await turns.evaluateAll((items) =>
      items.map((li) => ({ ...(li as HTMLElement).dataset, lat: li.querySelector('.lat')!.textContent, badges: li.querySelector('.badges')?.textContent ?? '' })),
    );
    expect(shown).toEqual([
      { turn: '4', flux: 'sos', sos: 'budget', lat: `${timeline.turns[3].latencyMs} ms`, badges: 'SOS · délai dépassé' },
      { turn: '3', flux: 'agent', interrupted: '', lat: `${timeline.turns[2].latencyMs} ms`, badges: 'interrompu par la personne' },
      { turn: '2', flux: 'cache', lat: `${timeline.turns[1].latencyMs} ms`, badges: '' },
      { turn: '1', flux: 'agent', lat: `${timeline.turns[0].latencyMs} ms`, badges: '' },
    ]);
    expect(await watcher.textContent('#timeline-summary')).toBe('4 tour(s) · 1 SOS · 1 interruption(s)');

    // Not a word of the conversation: not in the page, its socket frames, or any answer it was sent.
    expect(await watcher.content()).not.toContain(CANARY);
    expect(frames.length).toBeGreaterThan(0);
    expect(frames.filter((f) => f.includes(CANARY))).toEqual([]);
    expect(bodies.some((b) => b.includes('"turns"'))).toBe(true);
    expect(bodies.filter((b) => b.includes(CANARY) || b.includes('Bien sûr') || b.includes('retiens'))).toEqual([]);
    kiosk.close();
    await watcher.close();
  });

  it('fits 1280 px: the whole table, each « Fermer » and the detail panel in view', async () => {
    const seniors = await namedSeniors(rt.directory, ['Jeanne-Françoise de La Tour-Martin', 'Paul Lefèvre', 'Odette Garnier']);
    agent.use(streamingModel(['Je vous écoute.']));
    const kiosks = await Promise.all(seniors.map((s) => KioskClient.connect(rt.wsUrl, s.token)));
    const ids = await Promise.all(kiosks.map(async (k, i) => {
      const { sessionId } = await k.start();
      for (let t = 0; t <= i; t++) await k.turn(`l${t}`, 'raconte-moi ta journée');
      return String(sessionId);
    }));
    for (const [i, id] of ids.entries()) await expect.poll(() => page.locator(`tr[data-session="${id}"] td.senior .name`).textContent()).toBe(seniors[i]!.name);
    await page.locator(`tr[data-session="${ids[2]}"]`).click();
    await page.waitForSelector('#timeline li');
    expect(page.viewportSize()).toEqual({ width: 1280, height: 800 });
    expect(await layoutFaults(page)).toEqual([]);
    for (const k of kiosks) k.close();
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
