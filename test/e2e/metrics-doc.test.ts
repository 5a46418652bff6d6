import { readFileSync } from 'node:fs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ADMIN_TOKEN, startTestRuntime, type TestRuntime } from '../support/runtime.ts';

/**
 * docs/operations.md's metric tables stay in step with what `/metrics` serves: the real runtime is
 * started and scraped, and each family's name and type are compared both ways.
 */

const doc = readFileSync(new URL('../../docs/operations.md', import.meta.url), 'utf8');

/** Every family named in the first cell of a table row under `## Metrics` (up to the next `## `): name → type cell. */
function documentedFamilies(): Map<string, string> {
  const section = /^## Metrics: `GET \/metrics`\n([\s\S]*?)(?=^## )/m.exec(doc)?.[1];
  if (!section) throw new Error('docs/operations.md has no "## Metrics: `GET /metrics`" section');
  const families = new Map<string, string>();
  for (const line of section.split('\n')) {
    const cells = /^\|([^|]*)\|([^|]*)\|/.exec(line);
    if (!cells) continue;
    for (const [, name] of cells[1]!.matchAll(/`([a-z_][a-z0-9_]*)(?:\{[^}`]*\})?`/g)) {
      if (families.has(name!)) throw new Error(`docs/operations.md lists ${name} twice`);
      families.set(name!, cells[2]!.trim());
    }
  }
  return families;
}

/** Every family in a Prometheus text exposition, from its `# TYPE` line: name → type. */
function servedFamilies(text: string): Map<string, string> {
  return new Map([...text.matchAll(/^# TYPE (\S+) (\S+)$/gm)].map((m) => [m[1]!, m[2]!]));
}

let rt: TestRuntime;
let served: Map<string, string>;
const documented = documentedFamilies();

beforeAll(async () => {
  rt = await startTestRuntime();
  const res = await fetch(`${rt.url}/metrics`, { headers: { authorization: `Bearer ${ADMIN_TOKEN}` } });
  expect(res.status).toBe(200);
  served = servedFamilies(await res.text());
}, 60_000);

afterAll(async () => {
  await rt?.close();
});

describe('docs/operations.md metrics tables against GET /metrics', () => {
  it('reads both (sanity)', () => {
    expect(documented.size).toBeGreaterThan(40);
    expect(served.get('kohami_turns_total')).toBe('counter');
    expect(served.get('process_resident_memory_bytes')).toBe('gauge');
  });

  it('serves every documented family, with the documented type', () => {
    expect([...documented.keys()].filter((name) => !served.has(name)), 'documented, not served').toEqual([]);
    for (const [name, type] of documented) expect(type, `${name}'s type`).toBe(served.get(name));
  });

  it('documents every family served: the runtime’s and the process and Node.js ones', () => {
    expect([...served.keys()].filter((name) => !documented.has(name)), 'served, not documented').toEqual([]);
  });

  it('serves the event-loop lag, the derivation queue and the voice gauges operators alert on', () => {
    for (const name of ['nodejs_eventloop_lag_p99_seconds', 'nodejs_gc_duration_seconds', 'process_cpu_seconds_total', 'kohami_close_jobs_queued', 'kohami_close_jobs_in_flight', 'kohami_voice_sessions', 'kohami_transcription_sockets']) {
      expect(served.has(name), name).toBe(true);
    }
  });
});
