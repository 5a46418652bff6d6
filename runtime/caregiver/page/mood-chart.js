import { longDay, shortDay, TIERS, tierLabel } from './words.js';

const SVG = 'http://www.w3.org/2000/svg';
/** Drawn narrow, so that a phone shows the tiers' names at a readable size (a laptop shows it larger). */
const W = 360;
const H = 230;
/** Room on the left for the tiers' names, and under the bands for the days. */
const LEFT = 100;
const BOTTOM = 20;

const y = (score) => ((100 - score) / 100) * (H - BOTTOM);

function el(name, attrs, text) {
  const node = document.createElementNS(SVG, name);
  for (const [k, v] of Object.entries(attrs)) node.setAttribute(k, String(v));
  if (text !== undefined) node.textContent = text;
  return node;
}

/**
 * The mood over `days` (the last 30 Paris days, oldest first) as a small SVG: the four tiers as
 * labelled bands, each day's average a point. Colour only repeats what the text says: the bands
 * carry the tiers' names, and the same days are given as a sentence and a table.
 */
export function moodChart(days, timeline) {
  const byDay = new Map(timeline.map((d) => [d.day, d]));
  const x = (i) => LEFT + 8 + (i * (W - LEFT - 16)) / Math.max(1, days.length - 1);
  const svg = el('svg', { viewBox: `0 0 ${W} ${H}`, class: 'mood-chart', role: 'img', 'aria-labelledby': 'mood-summary' });
  for (const band of TIERS) {
    svg.append(el('rect', { x: 0, y: y(band.to), width: W, height: y(band.from) - y(band.to), class: `band ${band.tier}`, 'data-tier': band.tier }));
    svg.append(el('text', { x: 6, y: (y(band.to) + y(band.from)) / 2 + 5, class: 'band-label' }, band.label));
  }
  const points = days.map((day, i) => ({ i, d: byDay.get(day) })).filter((p) => p.d);
  if (points.length > 1) svg.append(el('polyline', { points: points.map((p) => `${x(p.i)},${y(p.d.average)}`).join(' '), class: 'line' }));
  for (const { i, d } of points) {
    const dot = el('circle', { cx: x(i), cy: y(d.average), r: 4, class: 'dot', 'data-day': d.day });
    dot.append(el('title', {}, `${longDay(d.day)} : ${d.average} sur 100, ${tierLabel(d.dominantTier)}`));
    svg.append(dot);
  }
  for (const i of [0, Math.floor((days.length - 1) / 2), days.length - 1]) {
    svg.append(el('text', { x: x(i), y: H - 4, class: 'day-label', 'text-anchor': i === 0 ? 'start' : i === days.length - 1 ? 'end' : 'middle' }, shortDay(days[i])));
  }
  return svg;
}

/** The chart in one sentence: how many days had exchanges, the average, and the days per tier. */
export function moodSummary(days, timeline) {
  const shown = timeline.filter((d) => days.includes(d.day));
  if (shown.length === 0) return `Aucune humeur relevée sur les ${days.length} derniers jours.`;
  const count = shown.reduce((n, d) => n + d.count, 0);
  const average = Math.round(shown.reduce((n, d) => n + d.average * d.count, 0) / count);
  const perTier = TIERS.map((t) => [t.label, shown.filter((d) => d.dominantTier === t.tier).length]).filter(([, n]) => n > 0);
  const jours = (n) => `${n} jour${n > 1 ? 's' : ''}`;
  return (
    `Sur les ${days.length} derniers jours : humeur relevée ${jours(shown.length)}, en moyenne ${average} sur 100. ` +
    `Humeur du jour : ${perTier.map(([label, n]) => `${label} ${jours(n)}`).join(', ')}.`
  );
}

/** The same days as a table, newest first: one row per day with a mood. */
export function moodTable(days, timeline) {
  const table = document.createElement('table');
  table.className = 'mood-table';
  table.createCaption().textContent = 'Humeur jour par jour';
  const head = table.createTHead().insertRow();
  for (const title of ['Jour', 'Humeur du jour', 'Moyenne sur 100', 'Relevés']) head.append(Object.assign(document.createElement('th'), { scope: 'col', textContent: title }));
  const body = table.createTBody();
  for (const d of timeline.filter((t) => days.includes(t.day)).reverse()) {
    const row = body.insertRow();
    row.dataset.day = d.day;
    for (const text of [longDay(d.day), tierLabel(d.dominantTier), String(d.average), String(d.count)]) row.insertCell().textContent = text;
  }
  return table;
}
