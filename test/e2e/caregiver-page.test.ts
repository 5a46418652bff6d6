import type { Browser, Page } from 'playwright-core';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { generateToken } from '../../adapters/postgres/tokens.ts';
import { CONSENT_CATEGORIES } from '../../machines/memory/memory.port.ts';
import { moodTier, type MoodTier } from '../../machines/memory/derivation.ts';
import { docScreens } from '../support/doc-screens.ts';
import { KioskClient } from '../support/kiosk-client.ts';
import { streamingModel, subagentModel } from '../support/models.ts';
import { launchConsoleBrowser } from '../support/ops-console-page.ts';
import { ADMIN_TOKEN, adminApi, KIOSK_TOKEN, startTestRuntime, type TestRuntime } from '../support/runtime.ts';

/**
 * The caregivers' page `/aidant` in headless Chromium against the real runtime: sign-in, the linked
 * seniors, 30 days of mood (the real repository's rows), the exchanges' summaries and the facts under
 * the senior's consents, refusals in French, and never a word the senior said.
 */
const CANARY = 'grelot-canari-5582';
const REPLY_CANARY = 'ardoise-canari-3316';
const DERIVED_SUMMARY = 'Le senior a évoqué son jardin et les semis de printemps.';
const DERIVED_FACT = 'Elle cultive des tomates dans son jardin.';
const PHONE = { width: 375, height: 812 } as const;
const LAPTOP = { width: 1280, height: 800 } as const;

let rt: TestRuntime;
let api: ReturnType<typeof adminApi>;
let browser: Browser;
/** Linked to Jeanne and Paul. */
let family: string;
/** Linked to Lucien only. */
let neighbour: string;
/** Linked to Marie, the demo senior whose kiosk speaks the canary. */
let marieFamily: string;
let jeanne: string;
let paul: string;
let lucien: string;
let marie: string;
/** Script errors and refusals (a CSP violation) of every page: none expected. */
const pageErrors: string[] = [];

/** The Paris day `i` days before today, `YYYY-MM-DD`. */
const parisDay = (i: number) => new Intl.DateTimeFormat('en-CA', { timeZone: 'Europe/Paris' }).format(new Date(Date.now() - i * 86_400_000));
/** Jeanne's seeded month: one capture a day at noon UTC (13:00 or 14:00 in Paris), every fifth day without one. */
const JEANNE_DAYS = Array.from({ length: 30 }, (_, i) => i)
  .filter((i) => i % 5 !== 4)
  .map((i) => ({ day: parisDay(i), score: [22, 41, 63, 84][i % 4]!, summary: `Jeanne a évoqué le jour ${i} de sa promenade.` }));

/** Days ago of Lucien's preoccupying scores, the oldest first. */
const LUCIEN_LOW_DAYS = [2, 1, 0];
/** A day as the page says it: « 2 décembre », « 1er décembre ». */
const frenchDay = (day: string) =>
  new Intl.DateTimeFormat('fr-FR', { timeZone: 'UTC', day: 'numeric', month: 'long' }).format(new Date(`${day}T12:00:00Z`)).replace(/^1 /, '1er ');

const asFamily = (path: string) => api('GET', path, undefined, family);

async function newPage(viewport: { width: number; height: number } = LAPTOP): Promise<Page> {
  const page = await browser.newPage({ viewport });
  page.on('pageerror', (err) => pageErrors.push(err.message));
  page.on('console', (m) => m.type() === 'error' && !m.text().startsWith('Failed to load resource') && pageErrors.push(m.text()));
  return page;
}

/** A page signed in through `#token=` in the address, showing `senior` (or the first linked one). */
async function openAs(token: string, senior?: string, viewport?: { width: number; height: number }): Promise<Page> {
  const page = await newPage(viewport);
  await page.goto(`${rt.url}/aidant${senior ? `?senior=${senior}` : ''}#token=${token}`);
  await page.waitForSelector('#senior:not([aria-busy]) > :is(h2, .error)');
  return page;
}

/** The screenshots docs/screens/ shows, written elsewhere unless asked for (test/support/doc-screens.ts). */
let screens: Awaited<ReturnType<typeof docScreens>>;

const shownSenior = (page: Page) => page.locator('#senior h2').textContent();
const summaries = (page: Page) => page.locator('#exchanges .summary').allTextContents();

beforeAll(async () => {
  rt = await startTestRuntime({
    agentModel: streamingModel([`Oui, ${REPLY_CANARY}.`]),
    subagentModel: subagentModel({ score: 74, summary: DERIVED_SUMMARY, facts: [{ content: DERIVED_FACT, category: 'profil', confidence: 0.9 }] }),
  });
  api = adminApi(rt);
  jeanne = await rt.directory.createSenior({ displayName: 'Jeanne Martin', preferredName: 'Jeanne', onboardingDone: true });
  paul = await rt.directory.createSenior({ displayName: 'Paul Bernard', onboardingDone: true });
  lucien = await rt.directory.createSenior({ displayName: 'Lucien Petit', onboardingDone: true });
  marie = (await rt.directory.seniorForKioskToken(KIOSK_TOKEN))!;
  for (const senior of [jeanne, paul, lucien]) for (const c of CONSENT_CATEGORIES) await rt.consents.grant(senior, c);
  const caregiver = async (label: string, seniors: string[]) => {
    const token = generateToken('caregiver');
    const id = await rt.directory.addApiToken('caregiver', token, label);
    for (const s of seniors) await rt.directory.linkCaregiver(id, s);
    return token;
  };
  family = await caregiver('fille de Jeanne et Paul', [jeanne, paul]);
  neighbour = await caregiver('voisin de Lucien', [lucien]);
  marieFamily = await caregiver('fils de Marie', [marie]);
  for (const d of JEANNE_DAYS) await rt.moodScores.insert({ seniorId: jeanne, score: d.score, tier: moodTier(d.score), summary: d.summary, recordedAt: new Date(`${d.day}T12:00:00Z`) });
  await rt.moodScores.insert({ seniorId: paul, score: 55, tier: 'neutre', summary: 'Paul a parlé de son club de belote.', recordedAt: new Date(`${parisDay(1)}T12:00:00Z`) });
  await rt.memory.memory.persist({ seniorId: jeanne, content: 'Sa fille Claire habite à Lyon.', category: 'contacts' });
  await rt.memory.memory.persist({ seniorId: jeanne, content: 'Elle prend un traitement pour la tension.', category: 'sante' });
  await rt.memory.memory.persist({ seniorId: lucien, content: 'Il collectionne les timbres.', category: 'profil' });
  // Lucien's last three days preoccupying: an open mood alert (CAREGIVER_ALERT_STREAK_DAYS's default, 3).
  for (const i of LUCIEN_LOW_DAYS) await rt.moodScores.insert({ seniorId: lucien, score: 18, tier: 'preoccupant', summary: 'Lucien a parlé de sa fatigue.', recordedAt: new Date(`${parisDay(i)}T12:00:00Z`) });
  browser = await launchConsoleBrowser();
  screens = await docScreens();
}, 60_000);
afterAll(async () => {
  await screens?.remove();
  await browser?.close();
  await rt?.close();
});

afterEach(() => {
  expect(pageErrors.splice(0)).toEqual([]);
});

describe('the caregivers’ API', () => {
  it('lists a caregiver’s linked seniors by the name the companion uses; other roles get 403', async () => {
    expect(await asFamily('/v1/caregiver/seniors')).toEqual({ status: 200, body: { data: [{ id: jeanne, name: 'Jeanne' }, { id: paul, name: 'Paul Bernard' }] } });
    expect((await api('GET', '/v1/caregiver/seniors', undefined, neighbour)).body).toEqual({ data: [{ id: lucien, name: 'Lucien Petit' }] });
    const admin = await api('GET', '/v1/caregiver/seniors');
    expect(admin).toEqual({ status: 403, body: { error: 'forbidden', message: 'this route requires role caregiver; the token has role admin' } });
    expect((await api('GET', '/v1/caregiver/seniors', undefined, 'caregiver_wrong')).status).toBe(401);
  });

  it('lets a linked caregiver read the consents, never change them; another senior’s are 403', async () => {
    const read = await asFamily(`/v1/admin/seniors/${jeanne}/consents`);
    expect(read.status).toBe(200);
    expect(read.body.consents.map((c: { category: string }) => c.category).sort()).toEqual([...CONSENT_CATEGORIES].sort());
    expect((await api('PUT', `/v1/admin/seniors/${jeanne}/consents/sante`, undefined, family)).status).toBe(403);
    expect((await api('DELETE', `/v1/admin/seniors/${jeanne}/consents/sante`, undefined, family)).status).toBe(403);
    for (const route of ['consents', 'mood-entries', 'mood-timeline', 'facts']) {
      expect(await asFamily(`/v1/admin/seniors/${lucien}/${route}`), route).toMatchObject({ status: 403, body: { error: 'forbidden' } });
    }
  });
});

describe('the caregivers’ page /aidant in headless Chromium', () => {
  it('takes the token out of the address bar, lists both linked seniors and switches between them', async () => {
    const page = await openAs(family);
    expect(page.url()).toBe(`${rt.url}/aidant?senior=${jeanne}`);
    expect(await page.evaluate(() => location.hash)).toBe('');
    expect(await page.evaluate(() => sessionStorage.getItem('kohami-aidant-token'))).toBe(family);
    expect(await page.locator('#seniors button').allTextContents()).toEqual(['Jeanne', 'Paul Bernard']);
    expect(await shownSenior(page)).toBe('Jeanne');
    expect(await page.locator('#seniors button[aria-pressed="true"]').textContent()).toBe('Jeanne');

    await page.click(`#seniors button[data-senior="${paul}"]`);
    await expect.poll(() => shownSenior(page)).toBe('Paul Bernard');
    expect(await summaries(page)).toEqual(['Paul a parlé de son club de belote.']);
    expect(await page.locator('#mood-summary').textContent()).toContain('humeur relevée 1 jour, en moyenne 55 sur 100');
    expect(page.url()).toBe(`${rt.url}/aidant?senior=${paul}`);
    await page.click(`#seniors button[data-senior="${jeanne}"]`);
    await expect.poll(() => shownSenior(page)).toBe('Jeanne');
    // A reload keeps the caregiver signed in (this tab's storage) and on the same senior.
    await page.reload();
    await page.waitForSelector('#senior h2');
    expect(await shownSenior(page)).toBe('Jeanne');
    await page.close();
  });

  it('draws 30 days of mood with the tiers named, and says the same days as a sentence and a table', async () => {
    const page = await openAs(family, jeanne);
    const chart = page.locator('#mood svg.mood-chart');
    expect(await chart.locator('.band-label').allTextContents()).toEqual(['préoccupante', 'mélancolique', 'neutre', 'enjouée']);
    expect(await chart.getAttribute('aria-labelledby')).toBe('mood-summary');
    expect(await chart.locator('circle.dot').count()).toBe(JEANNE_DAYS.length);

    const average = Math.round(JEANNE_DAYS.reduce((n, d) => n + d.score, 0) / JEANNE_DAYS.length);
    const perTier = (tier: MoodTier) => JEANNE_DAYS.filter((d) => moodTier(d.score) === tier).length;
    expect(await page.locator('#mood-summary').textContent()).toBe(
      `Sur les 30 derniers jours : humeur relevée ${JEANNE_DAYS.length} jours, en moyenne ${average} sur 100. ` +
        `Humeur du jour : préoccupante ${perTier('preoccupant')} jours, mélancolique ${perTier('melancolique')} jours, neutre ${perTier('neutre')} jours, enjouée ${perTier('enjoue')} jours.`,
    );
    const rows = await page.locator('#mood table.mood-table tbody tr').evaluateAll((trs) =>
      trs.map((tr) => ({ day: (tr as HTMLElement).dataset.day, cells: [...tr.querySelectorAll('td')].slice(1).map((td) => td.textContent) })),
    );
    const label = { preoccupant: 'préoccupante', melancolique: 'mélancolique', neutre: 'neutre', enjoue: 'enjouée' };
    expect(rows).toEqual(JEANNE_DAYS.map((d) => ({ day: d.day, cells: [label[moodTier(d.score)], String(d.score), '1'] })));
    await page.close();
  });

  it('shows the exchanges’ summaries by day, newest first, ten at a time with « Voir plus »', async () => {
    const page = await openAs(family, jeanne);
    const expected = JEANNE_DAYS.map((d) => d.summary);
    expect(await summaries(page)).toEqual(expected.slice(0, 10));
    expect(await page.locator('#exchanges .day').evaluateAll((days) => days.map((d) => (d as HTMLElement).dataset.day))).toEqual(JEANNE_DAYS.slice(0, 10).map((d) => d.day));
    await page.click('#more');
    await expect.poll(() => summaries(page)).toEqual(expected.slice(0, 20));
    await page.click('#more');
    await expect.poll(() => summaries(page)).toEqual(expected);
    expect(await page.locator('#more').isHidden()).toBe(true);
    await page.close();
  });

  it('hides the summaries and facts without the conversation consent, and a category’s facts without its own', async () => {
    const page = await openAs(family, jeanne);
    const facts = () => page.locator('#facts .facts').evaluateAll((gs) => gs.map((g) => [(g as HTMLElement).dataset.category, g.querySelector('h4')!.textContent, [...g.querySelectorAll('li')].map((li) => li.textContent)]));
    expect(await facts()).toEqual([
      ['contacts', 'Ses proches', ['Sa fille Claire habite à Lyon.']],
      ['sante', 'Santé', ['Elle prend un traitement pour la tension.']],
    ]);

    expect((await api('DELETE', `/v1/admin/seniors/${jeanne}/consents/conversation`)).status).toBe(200);
    try {
      await page.reload();
      await page.waitForSelector('#senior h2');
      expect(await page.locator('#no-consent').textContent()).toBe('Jeanne n’a pas donné son accord pour que les résumés de ses échanges soient partagés : ils ne sont pas affichés ici. Son humeur reste visible.');
      expect(await summaries(page)).toEqual([]);
      expect(await facts()).toEqual([]);
      // The mood stays: its scores are not words.
      expect(await page.locator('#mood circle.dot').count()).toBe(JEANNE_DAYS.length);
      expect(await page.locator('#consents tr[data-category="conversation"] td').textContent()).toMatch(/^Retiré le \d+ \S+ \d{4} \(donné le \d+ \S+ \d{4}\)$/);
      expect(await page.textContent('body')).not.toContain('Jeanne a évoqué');
    } finally {
      expect((await api('PUT', `/v1/admin/seniors/${jeanne}/consents/conversation`)).status).toBe(200);
    }

    expect((await api('DELETE', `/v1/admin/seniors/${jeanne}/consents/sante`)).status).toBe(200);
    try {
      await page.reload();
      await page.waitForSelector('#senior h2');
      expect(await facts()).toEqual([['contacts', 'Ses proches', ['Sa fille Claire habite à Lyon.']]]);
      expect(await page.textContent('body')).not.toContain('tension');
      expect(await summaries(page)).toHaveLength(10);
      const consents = await page.locator('#consents tr').evaluateAll((trs) => trs.map((tr) => [(tr as HTMLElement).dataset.category, (tr as HTMLElement).dataset.active, tr.querySelector('th')!.textContent]));
      expect(consents).toEqual([
        ['conversation', 'true', 'Résumés des échanges, humeur et souvenirs'],
        ['profil', 'true', 'Sa vie et ses goûts'],
        ['contacts', 'true', 'Ses proches'],
        ['sante', 'false', 'Santé'],
        ['localisation', 'true', 'Lieux'],
        ['vision', 'true', 'Vision'],
        ['biometrie', 'true', 'Données biométriques'],
      ]);
    } finally {
      await api('PUT', `/v1/admin/seniors/${jeanne}/consents/sante`);
    }
    await page.close();
  });

  it('says an open mood alert at the top, in a sentence; no alert box for a senior without one', async () => {
    const page = await openAs(neighbour, lucien);
    const alerts = page.locator('#senior > #alerts');
    expect(await alerts.isVisible()).toBe(true);
    expect(await alerts.locator('li').allTextContents()).toEqual([
      `Humeur préoccupante ${LUCIEN_LOW_DAYS.length} jours de suite, du ${frenchDay(parisDay(LUCIEN_LOW_DAYS[0]!))} au ${frenchDay(parisDay(0))}`,
    ]);
    // It comes first, before the chart.
    expect(await page.locator('#senior > section').first().getAttribute('id')).toBe('alerts');
    await page.screenshot({ path: screens.file('aidant-alert.png') });
    await page.close();

    const calm = await openAs(family, jeanne);
    expect(await calm.locator('#senior > #alerts').isHidden()).toBe(true);
    await calm.close();
  });

  it('refuses another caregiver’s senior, a wrong token and an admin token, in French', async () => {
    const page = await openAs(family, lucien);
    expect(await page.locator('#senior .error').textContent()).toBe('Vous n’avez pas accès aux informations de cette personne.');
    expect(await page.textContent('body')).not.toContain('timbres');
    // The caregiver's own seniors are still there to choose.
    expect(await page.locator('#seniors button').allTextContents()).toEqual(['Jeanne', 'Paul Bernard']);
    await page.close();

    const wrong = await newPage();
    await wrong.goto(`${rt.url}/aidant#token=caregiver_not_a_real_token`);
    await wrong.waitForSelector('#sign-in-error .error');
    expect(await wrong.textContent('#sign-in-error')).toBe('Ce code d’accès n’est pas reconnu. Vérifiez-le, ou demandez-en un nouveau à la personne qui vous l’a donné.');
    expect(wrong.url()).toBe(`${rt.url}/aidant`);
    expect(await wrong.evaluate(() => sessionStorage.getItem('kohami-aidant-token'))).toBeNull();
    // Typed into the field instead, the right token opens the page.
    await wrong.fill('#token', neighbour);
    await wrong.click('#connect');
    await expect.poll(() => shownSenior(wrong)).toBe('Lucien Petit');
    await wrong.close();

    const admin = await newPage();
    await admin.goto(`${rt.url}/aidant`);
    await admin.fill('#token', ADMIN_TOKEN);
    await admin.click('#connect');
    await admin.waitForSelector('#sign-in-error .error');
    expect(await admin.textContent('#sign-in-error')).toBe('Ce code d’accès n’est pas celui d’un proche : cette page est réservée aux proches aidants.');
    await admin.close();
  });

  it('says the runtime is unreachable when it does not answer', async () => {
    const page = await openAs(family, jeanne);
    await page.route('**/v1/**', (route) => route.abort('connectionrefused'));
    await page.reload();
    await page.waitForSelector('#sign-in-error .error');
    expect(await page.textContent('#sign-in-error')).toBe('Le service Kohami ne répond pas. Vérifiez votre connexion à Internet, puis réessayez.');
    // The token is kept: once the runtime answers, « Se connecter » tries it again.
    await page.unroute('**/v1/**');
    await page.click('#connect');
    await expect.poll(() => shownSenior(page)).toBe('Jeanne');
    await page.close();
  });

  it('fits a phone (375 px) and a laptop (1280×800) without sideways scrolling; screenshots for docs/screens', async () => {
    for (const [viewport, file] of [
      [PHONE, screens.file('aidant-phone.png')],
      [LAPTOP, screens.file('aidant-laptop.png')],
    ] as const) {
      const page = await openAs(family, jeanne, viewport);
      expect(await page.evaluate(() => document.documentElement.scrollWidth)).toBeLessThanOrEqual(viewport.width);
      await page.locator('#mood details summary').click();
      expect(await page.evaluate(() => document.documentElement.scrollWidth)).toBeLessThanOrEqual(viewport.width);
      await page.locator('#mood details summary').click();
      await page.screenshot({ path: file, fullPage: viewport === PHONE });
      await page.close();
    }
  });

  it('never shows a word the senior said: a canary spoken at the kiosk reaches no answer the page received, nor its text', async () => {
    const kiosk = await KioskClient.connect(rt.wsUrl, KIOSK_TOKEN);
    await kiosk.start();
    expect(await kiosk.turn('c1', `je vous confie le mot secret ${CANARY} pour mon jardin`)).toMatchObject({ flux: 'agent' });
    kiosk.send({ type: 'session.end' });
    expect(await kiosk.next('session.closed')).toMatchObject({ reason: 'ended' });
    kiosk.close();
    expect(await rt.closeJobs.drain(10_000)).toBe(true);

    const page = await newPage();
    const bodies: string[] = [];
    page.on('response', (res) => void res.text().then((t) => bodies.push(t), () => undefined));
    await page.goto(`${rt.url}/aidant#token=${marieFamily}`);
    await page.waitForSelector('#senior h2');
    // What the close-time derivations drew from the session is shown: the page did read it.
    expect(await summaries(page)).toEqual([DERIVED_SUMMARY]);
    expect(await page.locator('#facts li').allTextContents()).toContain(DERIVED_FACT);
    const text = await page.evaluate(() => document.documentElement.outerHTML + document.body.innerText);
    await page.close();
    expect(bodies.some((b) => b.includes(DERIVED_SUMMARY))).toBe(true);
    for (const needle of [CANARY, REPLY_CANARY]) {
      expect(text).not.toContain(needle);
      expect(bodies.filter((b) => b.includes(needle))).toEqual([]);
    }
  });
});
