// What the caregivers' page says, in French: the API's codes as a family reads them, and its dates.

/** The mood tiers (machines/memory/derivation.ts), lowest first, with their score bands (0–100). */
export const TIERS = [
  { tier: 'preoccupant', label: 'préoccupante', from: 0, to: 30 },
  { tier: 'melancolique', label: 'mélancolique', from: 30, to: 50 },
  { tier: 'neutre', label: 'neutre', from: 50, to: 70 },
  { tier: 'enjoue', label: 'enjouée', from: 70, to: 100 },
];

export const tierLabel = (tier) => TIERS.find((t) => t.tier === tier)?.label ?? tier;

/** The fact categories, in the order the page lists them. */
export const FACT_LABELS = {
  profil: 'Sa vie et ses goûts',
  contacts: 'Ses proches',
  sante: 'Santé',
  localisation: 'Lieux',
  vision: 'Vision',
  biometrie: 'Données biométriques',
};

/** The consent categories: the fact categories, and the one that covers everything drawn from the exchanges. */
export const CONSENT_LABELS = {
  conversation: 'Résumés des échanges, humeur et souvenirs',
  ...FACT_LABELS,
};

const PARIS = 'Europe/Paris';
const dayFormat = new Intl.DateTimeFormat('fr-FR', { timeZone: 'UTC', weekday: 'long', day: 'numeric', month: 'long' });
const shortDayFormat = new Intl.DateTimeFormat('fr-FR', { timeZone: 'UTC', day: 'numeric', month: 'long' });
const dateFormat = new Intl.DateTimeFormat('fr-FR', { timeZone: PARIS, day: 'numeric', month: 'long', year: 'numeric' });
const timeFormat = new Intl.DateTimeFormat('fr-FR', { timeZone: PARIS, hour: '2-digit', minute: '2-digit' });
const isoDayFormat = new Intl.DateTimeFormat('en-CA', { timeZone: PARIS, year: 'numeric', month: '2-digit', day: '2-digit' });

/** A calendar day `YYYY-MM-DD` at noon UTC: formatting it in UTC gives that day back whatever the zone. */
const noon = (day) => new Date(`${day}T12:00:00Z`);

/** French writes a month's first day « 1er » (« mardi 1er décembre »); Intl writes « 1 ». */
const withFirst = (format, date) => format.formatToParts(date).map((p) => (p.type === 'day' && p.value === '1' ? '1er' : p.value)).join('');

/** « jeudi 3 décembre » */
export const longDay = (day) => withFirst(dayFormat, noon(day));
/** « 3 décembre » */
export const shortDay = (day) => withFirst(shortDayFormat, noon(day));
/** An instant's date in Paris: « 3 décembre 2026 » */
export const dateOf = (iso) => withFirst(dateFormat, new Date(iso));
/** An instant's time in Paris: « 14:05 » */
export const timeOf = (iso) => timeFormat.format(new Date(iso));
/** An instant's Paris day, `YYYY-MM-DD` (the mood timeline's days). */
export const parisDay = (instant) => isoDayFormat.format(instant);

/** The `n` Paris days ending today, oldest first, as `YYYY-MM-DD`. */
export function lastDays(n, now = new Date()) {
  const today = noon(parisDay(now));
  return Array.from({ length: n }, (_, i) => new Date(today.getTime() - (n - 1 - i) * 86_400_000).toISOString().slice(0, 10));
}
