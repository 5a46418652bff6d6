import { alertSentence } from './mood-alerts.js';
import { moodChart, moodSummary, moodTable } from './mood-chart.js';
import { CONSENT_LABELS, dateOf, FACT_LABELS, lastDays, longDay, parisDay, tierLabel, timeOf } from './words.js';

/** Kept for this tab only: closing it signs the caregiver out. */
const TOKEN_KEY = 'kohami-aidant-token';
const CHART_DAYS = 30;
const ENTRIES_PAGE = 10;
/** A request the runtime has not answered by then is a runtime that does not answer: the page says so, never « Chargement… » for ever. */
const API_TIMEOUT_MS = 15_000;

const MESSAGES = {
  refused: 'Ce code d’accès n’est pas reconnu. Vérifiez-le, ou demandez-en un nouveau à la personne qui vous l’a donné.',
  notCaregiver: 'Ce code d’accès n’est pas celui d’un proche : cette page est réservée aux proches aidants.',
  forbidden: 'Vous n’avez pas accès aux informations de cette personne.',
  unreachable: 'Le service Kohami ne répond pas. Vérifiez votre connexion à Internet, puis réessayez.',
  failed: 'Le service Kohami n’a pas pu répondre. Réessayez dans un moment.',
};

const $ = (id) => document.getElementById(id);

/** A refused or failed API call, by what the page tells the caregiver. */
class ApiError extends Error {
  constructor(kind) {
    super(kind);
    this.kind = kind;
  }
}

async function api(path) {
  let res;
  try {
    res = await fetch(path, { headers: { authorization: `Bearer ${sessionStorage.getItem(TOKEN_KEY)}` }, cache: 'no-store', signal: AbortSignal.timeout(API_TIMEOUT_MS) });
  } catch {
    throw new ApiError('unreachable');
  }
  if (res.status === 401) throw new ApiError('refused');
  if (res.status === 403) throw new ApiError('forbidden');
  if (!res.ok) throw new ApiError(res.status >= 502 ? 'unreachable' : 'failed');
  return res.json();
}

function element(tag, props = {}, ...children) {
  const node = Object.assign(document.createElement(tag), props);
  node.append(...children);
  return node;
}

function showError(target, kind) {
  target.replaceChildren(element('p', { className: 'error', role: 'alert', textContent: MESSAGES[kind] ?? MESSAGES.failed }));
  target.hidden = false;
}

// ---- signing in ----

/** A token given in the address (`#token=…`) moves to this tab's storage and leaves the address bar and history. */
function takeTokenFromAddress() {
  const token = new URLSearchParams(location.hash.slice(1)).get('token');
  if (!token) return;
  sessionStorage.setItem(TOKEN_KEY, token);
  history.replaceState(null, '', location.pathname + location.search);
}

function showSignIn(kind) {
  $('signed-in').hidden = true;
  $('sign-out').hidden = true;
  $('sign-in').hidden = false;
  if (kind) showError($('sign-in-error'), kind);
  else $('sign-in-error').hidden = true;
  $('token').focus();
}

async function signIn() {
  let seniors;
  try {
    seniors = (await api('/v1/caregiver/seniors')).data;
  } catch (err) {
    if (err.kind !== 'unreachable') sessionStorage.removeItem(TOKEN_KEY);
    return showSignIn(err.kind === 'forbidden' ? 'notCaregiver' : err.kind);
  }
  $('sign-in').hidden = true;
  $('signed-in').hidden = false;
  $('sign-out').hidden = false;
  showSeniors(seniors);
}

// ---- the seniors ----

let seniorNames = new Map();

function showSeniors(seniors) {
  seniorNames = new Map(seniors.map((s) => [s.id, s.name]));
  const list = $('seniors');
  list.replaceChildren(
    ...seniors.map((s) => {
      const button = element('button', { type: 'button', textContent: s.name });
      button.dataset.senior = s.id;
      button.addEventListener('click', () => openSenior(s.id));
      return element('li', {}, button);
    }),
  );
  $('no-senior').hidden = seniors.length > 0;
  const asked = new URLSearchParams(location.search).get('senior');
  const first = asked ?? seniors[0]?.id;
  if (first) openSenior(first);
}

/** Bumped at each senior opened: answers for a senior the caregiver has left are dropped. */
let shown = 0;

async function openSenior(id) {
  const generation = ++shown;
  history.replaceState(null, '', `${location.pathname}?senior=${encodeURIComponent(id)}`);
  for (const b of document.querySelectorAll('#seniors button')) b.setAttribute('aria-pressed', String(b.dataset.senior === id));
  const view = $('senior');
  view.dataset.senior = id;
  view.setAttribute('aria-busy', 'true');
  view.replaceChildren(element('p', { className: 'muted', textContent: 'Chargement…' }));
  const days = lastDays(CHART_DAYS);
  const base = `/v1/admin/seniors/${encodeURIComponent(id)}`;
  let data;
  try {
    data = await Promise.all([
      api(`${base}/consents`),
      api(`${base}/mood-timeline?from=${days[0]}`),
      api(`${base}/mood-entries?limit=${ENTRIES_PAGE}`),
      allFacts(base),
      api(`${base}/mood-alerts`),
    ]);
  } catch (err) {
    if (generation !== shown) return;
    view.removeAttribute('aria-busy');
    if (err.kind === 'refused') {
      sessionStorage.removeItem(TOKEN_KEY);
      return showSignIn('refused');
    }
    return showError(view, err.kind);
  }
  if (generation !== shown) return;
  const [consents, timeline, entries, facts, alerts] = data;
  const name = seniorNames.get(id) ?? '';
  const conversation = consents.consents.some((c) => c.category === 'conversation' && c.active);
  view.replaceChildren(
    element('h2', { textContent: name }),
    alertsSection(alerts),
    moodSection(days, timeline.days),
    exchangesSection(base, entries, conversation, name, generation),
    factsSection(facts, conversation, name),
    consentsSection(consents.consents),
  );
  view.removeAttribute('aria-busy');
}

/** Pages of facts read for one senior at most: a list longer than this is not read in one sitting anyway. */
const MAX_FACT_PAGES = 5;

async function allFacts(base) {
  const facts = [];
  let cursor = null;
  let pages = 0;
  do {
    const page = await api(`${base}/facts?limit=200${cursor ? `&cursor=${encodeURIComponent(cursor)}` : ''}`);
    facts.push(...page.data);
    cursor = page.nextCursor;
  } while (cursor && ++pages < MAX_FACT_PAGES);
  return facts;
}

// ---- what the page shows of one senior ----

function section(id, title, ...children) {
  return element('section', { id }, element('h3', { textContent: title }), ...children);
}

function alertsSection(answer) {
  const sentences = answer.alerts.map(alertSentence).filter(Boolean);
  const box = element('section', { id: 'alerts', hidden: sentences.length === 0 });
  box.setAttribute('role', 'status');
  box.append(element('ul', {}, ...sentences.map((s) => element('li', { textContent: s }))));
  return box;
}

function moodSection(days, timeline) {
  const summary = element('p', { id: 'mood-summary', textContent: moodSummary(days, timeline) });
  const details = element('details', {}, element('summary', { textContent: 'Voir le détail jour par jour' }), moodTable(days, timeline));
  return section('mood', `Humeur sur ${days.length} jours`, summary, moodChart(days, timeline), details);
}

function exchangesSection(base, first, conversation, name, generation) {
  if (!conversation) {
    return section('exchanges', 'Derniers échanges', element('p', { id: 'no-consent', className: 'notice', textContent: `${name || 'Cette personne'} n’a pas donné son accord pour que les résumés de ses échanges soient partagés : ils ne sont pas affichés ici. Son humeur reste visible.` }));
  }
  const list = element('div', { className: 'days' });
  const empty = element('p', { className: 'muted', textContent: 'Pas encore de résumé d’échange.' });
  const more = element('button', { type: 'button', id: 'more', textContent: 'Voir plus' });
  const append = (page) => {
    for (const entry of page.data) {
      if (!entry.summary) continue;
      const day = parisDay(new Date(entry.recordedAt));
      let group = list.lastElementChild;
      if (group?.dataset.day !== day) {
        group = element('div', { className: 'day' }, element('h4', { textContent: longDay(day) }), element('ul'));
        group.dataset.day = day;
        list.append(group);
      }
      const item = element('li', {}, element('span', { className: 'when', textContent: `${timeOf(entry.recordedAt)} · humeur ${tierLabel(entry.tier)}` }), element('span', { className: 'summary', textContent: entry.summary }));
      group.querySelector('ul').append(item);
    }
    empty.hidden = list.childElementCount > 0;
    more.hidden = !page.nextCursor;
    more.dataset.cursor = page.nextCursor ?? '';
  };
  more.addEventListener('click', async () => {
    more.disabled = true;
    try {
      const page = await api(`${base}/mood-entries?limit=${ENTRIES_PAGE}&cursor=${encodeURIComponent(more.dataset.cursor)}`);
      if (generation === shown) append(page);
    } catch (err) {
      if (generation === shown) more.after(element('p', { className: 'error', role: 'alert', textContent: MESSAGES[err.kind] ?? MESSAGES.failed }));
    } finally {
      more.disabled = false;
    }
  });
  append(first);
  return section('exchanges', 'Derniers échanges', list, empty, more);
}

function factsSection(facts, conversation, name) {
  if (!conversation) {
    return section('facts', 'Ce que le compagnon retient', element('p', { className: 'notice', textContent: `Sans l’accord de ${name || 'cette personne'} sur ses échanges, rien de ce que le compagnon retient n’est affiché.` }));
  }
  const held = facts.filter((f) => f.valid);
  const groups = Object.entries(FACT_LABELS)
    .map(([category, label]) => [category, label, held.filter((f) => f.category === category)])
    .filter(([, , items]) => items.length > 0)
    .map(([category, label, items]) => {
      const group = element('div', { className: 'facts' }, element('h4', { textContent: label }), element('ul', {}, ...items.map((f) => element('li', { textContent: f.content }))));
      group.dataset.category = category;
      return group;
    });
  return section('facts', 'Ce que le compagnon retient', ...(groups.length ? groups : [element('p', { className: 'muted', textContent: 'Rien pour l’instant.' })]));
}

function consentsSection(consents) {
  const rows = Object.entries(CONSENT_LABELS).map(([category, label]) => {
    const c = consents.find((x) => x.category === category);
    const state = !c ? 'Jamais donné' : c.active ? `Donné le ${dateOf(c.grantedAt)}` : `Retiré le ${dateOf(c.revokedAt)} (donné le ${dateOf(c.grantedAt)})`;
    const row = element('tr', {}, element('th', { scope: 'row', textContent: label }), element('td', { textContent: state }));
    row.dataset.category = category;
    row.dataset.active = String(Boolean(c?.active));
    return row;
  });
  const note = element('p', { className: 'muted', textContent: 'Ces accords se changent auprès de l’équipe qui a installé le compagnon.' });
  return section('consents', 'Les accords donnés', element('table', {}, element('tbody', {}, ...rows)), note);
}

// ---- start ----

$('sign-in').addEventListener('submit', (event) => {
  event.preventDefault();
  // Empty: the token kept from before, tried again (after « le service ne répond pas »).
  const token = $('token').value.trim() || sessionStorage.getItem(TOKEN_KEY);
  if (!token) return;
  sessionStorage.setItem(TOKEN_KEY, token);
  $('token').value = '';
  signIn();
});
$('sign-out').addEventListener('click', () => {
  sessionStorage.removeItem(TOKEN_KEY);
  history.replaceState(null, '', location.pathname);
  $('senior').replaceChildren();
  showSignIn();
});

takeTokenFromAddress();
if (sessionStorage.getItem(TOKEN_KEY)) signIn();
else showSignIn();
