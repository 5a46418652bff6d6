import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { loadConfig } from '../../runtime/config.ts';
import { schemaVariables } from '../support/config-variables.ts';

/**
 * docs/configuration.md's tables stay in step with runtime/config.ts: every variable the schema
 * reads has a row, no row names a variable the schema does not know, and each documented default
 * is the schema's (read by parsing an empty environment).
 */

const doc = readFileSync(new URL('../../docs/configuration.md', import.meta.url), 'utf8');

/** The rows of every table under `## Variables` (up to the next `## ` heading): name → default cell. */
function documentedVariables(): Map<string, string> {
  const section = /^## Variables\n([\s\S]*?)(?=^## )/m.exec(doc)?.[1];
  if (!section) throw new Error('docs/configuration.md has no "## Variables" section');
  const rows = new Map<string, string>();
  for (const line of section.split('\n')) {
    const cells = /^\|\s*`([A-Z][A-Z0-9_]*)`\s*\|([^|]*)\|/.exec(line);
    if (!cells) continue;
    if (rows.has(cells[1]!)) throw new Error(`docs/configuration.md documents ${cells[1]} twice`);
    rows.set(cells[1]!, cells[2]!.trim());
  }
  return rows;
}

/** Defaults written as a formula rather than a value: checked against the formula itself. */
const DERIVED: Record<string, { cell: RegExp; check: () => void }> = {
  STT_FLUSH_ANSWER_MS: {
    cell: /^min\(600, ⌊`STT_BUDGET_MS` \/ 3⌋\)$/,
    check: () => {
      for (const budget of [2000, 1500, 300, 6000]) {
        expect(loadConfig({ STT_BUDGET_MS: String(budget) }).STT_FLUSH_ANSWER_MS, `STT_BUDGET_MS=${budget}`).toBe(Math.min(600, Math.floor(budget / 3)));
      }
    },
  },
  RECALL_BUDGET_MS: {
    cell: /^min\(400, ⌊`TURN_BUDGET_MS` \/ 3⌋\)$/,
    check: () => {
      for (const turn of [2500, 1200, 900, 3000]) {
        expect(loadConfig({ TURN_BUDGET_MS: String(turn) }).RECALL_BUDGET_MS, `TURN_BUDGET_MS=${turn}`).toBe(Math.min(400, Math.floor(turn / 3)));
      }
    },
  },
};

describe('docs/configuration.md', () => {
  const documented = documentedVariables();
  const known = schemaVariables();

  it('reads the schema and the tables (sanity)', () => {
    expect(known.length).toBeGreaterThan(30);
    expect(known).toContain('TURN_BUDGET_MS');
    expect(documented.size).toBeGreaterThan(30);
  });

  it('documents every variable the schema reads', () => {
    expect(known.filter((name) => !documented.has(name)), 'variables of runtime/config.ts without a row').toEqual([]);
  });

  it('documents no variable the schema does not know', () => {
    expect([...documented.keys()].filter((name) => !known.includes(name)), 'rows naming no variable of runtime/config.ts').toEqual([]);
  });

  it("gives each variable the schema's default", () => {
    const defaults = loadConfig({}) as Record<string, unknown>;
    for (const [name, cell] of documented) {
      const derived = DERIVED[name];
      if (derived) {
        expect(cell, `${name}'s default cell`).toMatch(derived.cell);
        derived.check();
        continue;
      }
      const value = defaults[name];
      if (cell === '—') {
        expect(value, `${name} is documented as unset by default`).toBeUndefined();
        continue;
      }
      const literal = /^`([^`]*)`/.exec(cell)?.[1];
      expect(literal, `${name}'s default cell should start with a \`value\` or be —, got "${cell}"`).toBeDefined();
      expect(value, `${name} has no default in the schema, but the table gives ${literal}`).toBeDefined();
      expect(literal, `${name}'s documented default`).toBe(String(value));
    }
  });
});
