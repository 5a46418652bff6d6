import { mkdtemp } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { openDatabase } from '../../runtime/db/database.ts';
import { filesContaining, tablesContaining } from '../support/canary-sweep.ts';
import { KioskClient } from '../support/kiosk-client.ts';
import { OtlpReceiver } from '../support/otlp-receiver.ts';
import { streamingModel, subagentModel } from '../support/models.ts';
import { startWirePostgres } from '../support/pglite-server.ts';
import { KIOSK_TOKEN, startTestRuntime, type TestRuntime } from '../support/runtime.ts';

const CANARY = 'zorglub-canari-4417';
const REPLY_CANARY = 'plumeau-canari-9902';
const SPOKEN = `je vous confie le mot secret ${CANARY} que personne ne doit jamais entendre`;

/** A session with both canaries, closed, every derivation done. */
async function converse(rt: TestRuntime): Promise<void> {
  const kiosk = await KioskClient.connect(rt.wsUrl, KIOSK_TOKEN);
  await kiosk.start();
  expect(await kiosk.turn('c1', SPOKEN)).toMatchObject({ flux: 'agent' });
  expect(await kiosk.turn('c2', `bonjour ${CANARY}`)).toMatchObject({ flux: 'cache' });
  kiosk.send({ type: 'session.end' });
  expect(await kiosk.next('session.closed')).toMatchObject({ reason: 'ended' });
  kiosk.close();
  expect(await rt.closeJobs.drain(10_000)).toBe(true);
}

// A careless summarizer that copies the exchange: the verbatim guard must keep it out of the table.
const sloppy = () => subagentModel({ summary: `La personne a dit : ${SPOKEN}`, facts: [{ content: 'Elle a confié un mot secret.', category: 'profil', confidence: 0.9 }] });

describe('never verbatim (AC-06-A-62), end to end', () => {
  let dir: string;
  let rt: TestRuntime;
  /** Traces are on: every span the runtime exports reaches this collector. */
  let collector: OtlpReceiver;
  beforeAll(async () => {
    dir = path.join(await mkdtemp(path.join(tmpdir(), 'kohami-verbatim-')), 'pglite');
    collector = await new OtlpReceiver().start();
    rt = await startTestRuntime({ agentModel: streamingModel([`Oui, ${REPLY_CANARY}.`]), subagentModel: sloppy() }, { PGLITE_DATA_DIR: dir, OTEL_EXPORTER_OTLP_ENDPOINT: collector.url });
    await converse(rt);
  });
  afterAll(async () => {
    await rt.close();
    await collector.stop();
  });

  it('the derivations ran: one mood row per turn (summary dropped as an echo), the fact extracted', async () => {
    const moods = await rt.db.pool.query('SELECT summary FROM mood_scores');
    expect(moods.rows).toEqual([{ summary: null }, { summary: null }]);
    const facts = await rt.db.pool.query('SELECT fact FROM memory_facts');
    expect(facts.rows).toEqual([{ fact: 'Elle a confié un mot secret.' }]);
  });

  it('no column of any table and no log line holds the canaries', async () => {
    expect(rt.logs.lines.length).toBeGreaterThan(3);
    for (const needle of [CANARY, REPLY_CANARY]) {
      expect(rt.logs.text).not.toContain(needle);
      expect(await tablesContaining(rt.db.pool, needle)).toEqual([]);
    }
    // The search itself works: a value that is stored is found.
    expect(await tablesContaining(rt.db.pool, 'Marie')).toContain('public.seniors.preferred_name');
  });

  it('no file of the PGlite data directory holds them, once the database is closed', async () => {
    await rt.close();
    expect(await filesContaining(dir, 'Marie')).not.toEqual([]);
    expect(await filesContaining(dir, CANARY)).toEqual([]);
    expect(await filesContaining(dir, REPLY_CANARY)).toEqual([]);
    const reopened = await openDatabase({ pgliteDataDir: dir });
    await reopened.close();
  });

  it('no exported span holds them (names, attributes, events), once the shutdown has flushed the traces', async () => {
    await rt.close();
    // The spans were exported: both turns, the agent's with its model call.
    const turns = collector.named('kohami.turn');
    expect(turns.map((t) => t.attributes['kohami.flux']).sort()).toEqual(['agent', 'cache']);
    expect(collector.spans.some((s) => s.attributes['gen_ai.operation.name'] === 'chat')).toBe(true);
    // The sweep itself finds what is there.
    expect(collector.bodies.join('\n')).toContain(turns[0]!.attributes['session.id'] as string);
    for (const needle of [CANARY, REPLY_CANARY]) expect(collector.bodies.filter((b) => b.includes(needle))).toEqual([]);
  });
});

describe('never verbatim on the pg wire path (DATABASE_URL)', () => {
  it('the same session leaves no canary in any table', async () => {
    const wire = await startWirePostgres();
    const rt = await startTestRuntime({ agentModel: streamingModel([`Oui, ${REPLY_CANARY}.`]), subagentModel: sloppy() }, { DATABASE_URL: wire.url });
    try {
      await converse(rt);
      expect(await tablesContaining(rt.db.pool, CANARY)).toEqual([]);
      expect(await tablesContaining(rt.db.pool, REPLY_CANARY)).toEqual([]);
      expect(rt.logs.text).not.toContain(CANARY);
    } finally {
      await rt.close();
      await wire.stop();
    }
  });
});
