import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { loadConfig } from '../../runtime/config.ts';
import { schemaVariables } from '../support/config-variables.ts';

/**
 * .env.example stays in step with runtime/config.ts: it names every setting the schema reads and no
 * other, each once and under a comment line; a setting with a default is assigned exactly it, and one
 * without (or with a computed one) is commented out.
 */

const lines = readFileSync(new URL('../../.env.example', import.meta.url), 'utf8').split('\n');

interface Entry {
  value: string;
  commented: boolean;
  /** The line above it. */
  above: string;
}

function entries(): Map<string, Entry> {
  const found = new Map<string, Entry>();
  lines.forEach((line, i) => {
    const m = /^(# )?([A-Z][A-Z0-9_]*)=(.*)$/.exec(line);
    if (!m) return;
    if (found.has(m[2]!)) throw new Error(`.env.example lists ${m[2]} twice`);
    found.set(m[2]!, { value: m[3]!, commented: m[1] !== undefined, above: lines[i - 1] ?? '' });
  });
  return found;
}

/** Defaults computed from other settings: documented in a comment, never assigned. */
const COMPUTED = new Set(['KOHAMI_ENV', 'RECALL_BUDGET_MS', 'STT_FLUSH_ANSWER_MS']);

describe('.env.example', () => {
  const listed = entries();
  const known = schemaVariables();
  const defaults = loadConfig({}) as Record<string, unknown>;

  it('lists every setting of the schema, and no other', () => {
    expect(known.length).toBeGreaterThan(30);
    expect(known.filter((name) => !listed.has(name)), 'settings missing from .env.example').toEqual([]);
    expect([...listed.keys()].filter((name) => !known.includes(name)), 'names the schema does not read').toEqual([]);
  });

  it('gives each one a comment line', () => {
    for (const [name, { above }] of listed) expect(above, `the line above ${name}`).toMatch(/^# (?![A-Z][A-Z0-9_]*=).+/);
  });

  it("assigns each default the schema's value, and comments out the unset and computed ones", () => {
    for (const [name, entry] of listed) {
      const unset = defaults[name] === undefined || COMPUTED.has(name);
      expect(entry.commented, `${name} is ${unset ? 'unset or computed: commented out' : 'assigned its default'}`).toBe(unset);
      if (!unset) expect(entry.value, `${name}'s default`).toBe(String(defaults[name]));
    }
  });

  it('parses as it is, to the defaults; its commented examples parse too', () => {
    const active = Object.fromEntries([...listed].filter(([, e]) => !e.commented).map(([name, e]) => [name, e.value]));
    expect(loadConfig(active)).toEqual(loadConfig({}));
    const examples = Object.fromEntries([...listed].filter(([, e]) => e.commented && e.value !== '').map(([name, e]) => [name, e.value]));
    // ZEP_API_URL goes with a key, and CAREGIVER_ALERT_WEBHOOK_URL with a secret, which the file leaves empty.
    expect(() => loadConfig({ ...active, ...examples, ZEP_API_KEY: 'example-key', CAREGIVER_ALERT_WEBHOOK_SECRET: 'example-secret-of-32-characters-' })).not.toThrow();
  });
});
