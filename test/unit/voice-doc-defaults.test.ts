import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { loadConfig } from '../../runtime/config.ts';
import { schemaVariables } from '../support/config-variables.ts';

/**
 * docs/voice.md's prose quotes defaults, and they drift (it once said "700 ms when nothing tells" where
 * ENDPOINT_SILENCE_MS was 2,200 ms). The convention, stated at the top of that doc: a default is quoted
 * only beside its setting's name, as `NAME` (value) — the name in backticks (bold or not), then, after
 * spaces or a line break, a parenthesis opening on the value: a number (thousands with commas) and, for
 * a setting in ms (`_MS`), its unit (ms, s or min); a count has no unit. Every such quote is checked
 * against runtime/config.ts's schema defaults, the way config-doc.test.ts checks configuration.md's table.
 */

const doc = readFileSync(new URL('../../docs/voice.md', import.meta.url), 'utf8');

/** Names quoted the same way that are not runtime settings: constants of the kiosk page, with their own tests. */
const NOT_SETTINGS = new Set(['PAGE_BACKOFF', 'REPLACED_WAIT_MS', 'VOICE_SETUP_MS']);

const MS_PER_UNIT: Record<string, number> = { ms: 1, s: 1000, min: 60_000 };

interface Quote {
  name: string;
  /** The value as written, e.g. "2,200 ms". */
  text: string;
  line: number;
  /** In a table row rather than in running prose. */
  inTable: boolean;
}

/** Every `NAME` (number [unit] …) in the doc. */
function quotedDefaults(): Quote[] {
  const quotes: Quote[] = [];
  for (const m of doc.matchAll(/`([A-Z][A-Z0-9_]+)`\**\s+\((\d[\d,]*(?:\.\d+)?(?: ?[a-z]+\b)?)/g)) {
    const lines = doc.slice(0, m.index).split('\n');
    quotes.push({ name: m[1]!, text: m[2]!, line: lines.length, inTable: lines.at(-1)!.startsWith('|') });
  }
  return quotes;
}

/** The quoted value in the setting's own unit (ms for an `_MS` setting), or why it cannot be read. */
function valueOf(quote: Quote): number | string {
  const m = /^([\d,]+(?:\.\d+)?)(?: ?([a-z]+))?$/.exec(quote.text)!;
  const number = Number(m[1]!.replaceAll(',', ''));
  const unit = m[2];
  if (!quote.name.endsWith('_MS')) return unit === undefined ? number : `a count, written with a unit (${unit})`;
  const scale = unit === undefined ? undefined : MS_PER_UNIT[unit];
  return scale === undefined ? `a duration needs ms, s or min, got "${quote.text}"` : number * scale;
}

describe('docs/voice.md', () => {
  const quotes = quotedDefaults();
  const settings = schemaVariables();
  const defaults = loadConfig({}) as Record<string, unknown>;

  it('reads the quotes (sanity)', () => {
    expect(quotes.length).toBeGreaterThan(10);
    expect(quotes.map((q) => q.name)).toContain('STT_EARLY_FLUSH_MS');
  });

  it('quotes the end-of-turn waits by name in the prose too, not only in the decision’s table (the prose is where they drifted)', () => {
    const prose = quotes.filter((q) => !q.inTable).map((q) => q.name);
    expect(prose).toEqual(expect.arrayContaining(['ENDPOINT_MIN_MS', 'ENDPOINT_SILENCE_MS', 'ENDPOINT_UNFINISHED_MS', 'ENDPOINT_MAX_MS']));
  });

  it('quotes only settings runtime/config.ts reads (or constants it names as such)', () => {
    const unknown = quotes.filter((q) => !settings.includes(q.name) && !NOT_SETTINGS.has(q.name)).map((q) => `${q.name} (line ${q.line})`);
    expect(unknown, 'quoted like a setting, but runtime/config.ts reads no such variable').toEqual([]);
  });

  it("quotes each setting's schema default", () => {
    const wrong = quotes
      .filter((q) => settings.includes(q.name))
      .map((q) => ({ quote: `${q.name} (${q.text}), line ${q.line}`, documented: valueOf(q), schema: defaults[q.name] }))
      .filter((q) => q.documented !== q.schema);
    expect(wrong, 'quotes that are not the schema default').toEqual([]);
  });

  it('reads a quote as the convention says (the reader itself)', () => {
    const read = (name: string, text: string) => valueOf({ name, text, line: 0, inTable: false });
    expect(read('ENDPOINT_SILENCE_MS', '2,200 ms')).toBe(2200);
    expect(read('MAX_UTTERANCE_MS', '30 s')).toBe(30_000);
    expect(read('STT_BUDGET_MS', '1.5 s')).toBe(1500);
    expect(read('KIOSK_STARTS_BURST', '20')).toBe(20);
    expect(read('ENDPOINT_MIN_MS', '400')).toMatch(/needs ms, s or min/);
    expect(read('KIOSK_STARTS_BURST', '20 s')).toMatch(/a count/);
  });
});
