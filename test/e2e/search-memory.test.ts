import type { LanguageModelV3StreamPart } from '@ai-sdk/provider';
import { MockLanguageModelV3 } from 'ai/test';
import pgvector from 'pgvector';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { MemorySearch } from '../../adapters/memory/memory-search.ts';
import { generateToken } from '../../adapters/postgres/tokens.ts';
import { KioskClient } from '../support/kiosk-client.ts';
import { MS, OtlpReceiver } from '../support/otlp-receiver.ts';
import { systemPromptOf } from '../support/models.ts';
import { startTestRuntime, type TestRuntime } from '../support/runtime.ts';

const usage = { inputTokens: { total: 1, noCache: 1, cacheRead: 0, cacheWrite: 0 }, outputTokens: { total: 1, text: 1, reasoning: 0 } };
const stream = (parts: LanguageModelV3StreamPart[]) =>
  new ReadableStream<LanguageModelV3StreamPart>({
    start(c) {
      for (const p of parts) c.enqueue(p);
      c.close();
    },
  });

/** First step: calls search_memory; second step: answers. Records what each step was given. */
const model = new MockLanguageModelV3({
  doStream: async (options) => {
    const answered = options.prompt.some((m) => m.role === 'tool');
    return {
      stream: stream(
        answered
          ? [
              { type: 'stream-start', warnings: [] },
              { type: 'text-start', id: 't' },
              { type: 'text-delta', id: 't', delta: 'Oui, votre voyage à Quimper !' },
              { type: 'text-end', id: 't' },
              { type: 'finish', finishReason: { unified: 'stop', raw: 'stop' }, usage },
            ]
          : [
              { type: 'stream-start', warnings: [] },
              { type: 'tool-call', toolCallId: 'c1', toolName: 'search_memory', input: JSON.stringify({ query: 'voyage à Quimper' }) },
              { type: 'finish', finishReason: { unified: 'tool-calls', raw: 'tool_calls' }, usage },
            ],
      ),
    };
  },
});

let rt: TestRuntime;
let senior: string;
let kiosk: KioskClient;
/** Traces are on: the tool's span is checked. */
let collector: OtlpReceiver;

beforeAll(async () => {
  collector = await new OtlpReceiver().start();
  rt = await startTestRuntime({ agentModel: model }, { OTEL_EXPORTER_OTLP_ENDPOINT: collector.url });
  senior = await rt.directory.createSenior({ displayName: 'Yvonne', preferredName: 'Yvonne', onboardingDone: true });
  for (const c of ['conversation', 'profil'] as const) await rt.consents.grant(senior, c);
  // Five archived sessions: the 3 most recent are injected, the older two are vectorized (tier 3).
  const summaries = ['Yvonne a raconté son voyage à Quimper en car.', 'Yvonne a parlé de son chat.', 'Séance récente 1.', 'Séance récente 2.', 'Séance récente 3.'];
  for (const [i, summary] of summaries.entries()) {
    const vectorized = i < 2;
    const [v] = await rt.embedder.embed([summary]);
    await rt.db.pool.query(
      `INSERT INTO segments (senior_id, summary, started_at, ended_at, turn_count, embedding, embedding_model) VALUES ($1, $2, $3, $3, 4, $4::vector, $5)`,
      [senior, summary, `2026-11-0${i + 1}T10:00:00Z`, vectorized ? pgvector.toSql(v!) : null, vectorized ? rt.embedder.modelId : null],
    );
  }
  const token = generateToken('kiosk');
  await rt.directory.addDevice(senior, token);
  kiosk = await KioskClient.connect(rt.wsUrl, token);
  await kiosk.start();
});
afterAll(async () => {
  kiosk.close();
  await rt.close();
  await collector.stop();
});

describe('tier 3: search_memory, on demand', () => {
  it('the agent reaches an old, never-injected segment through the tool, then answers', async () => {
    const done = await kiosk.turn('q1', 'Tu te souviens de mon voyage à Quimper ?');
    expect(done).toMatchObject({ text: 'Oui, votre voyage à Quimper !' });
    const first = model.doStreamCalls[0]!;
    expect(first.tools?.map((t) => t.name)).toEqual(['search_memory']);
    const firstSystem = systemPromptOf(model, 0);
    expect(firstSystem).not.toContain('Quimper');
    expect(firstSystem).toContain('Séance récente 3.');
    const toolResult = JSON.stringify(model.doStreamCalls[1]!.prompt.filter((m) => m.role === 'tool'));
    expect(toolResult).toContain('son voyage à Quimper en car');
    expect(toolResult).not.toContain('Séance récente');
  });

  it('a reply that used the tool is never stored by the semantic cache', async () => {
    const calls = model.doStreamCalls.length;
    const again = await kiosk.turn('q2', 'Tu te souviens de mon voyage à Quimper ?');
    expect(again.flux).not.toBe('semantic_cache');
    expect(model.doStreamCalls.length).toBeGreaterThan(calls);
  });

  it('finds nothing without the conversation consent', async () => {
    const memorySearch = new MemorySearch(rt.db.pool, rt.consents, rt.memory.memory, rt.embedder);
    const found = await memorySearch.searchMemory(senior, 'mon voyage à Quimper');
    expect(found.segments).toHaveLength(2);
    expect(found.segments[0]).toContain('Quimper');
    await rt.consents.revoke(senior, 'conversation');
    expect(await memorySearch.searchMemory(senior, 'Quimper')).toEqual({ segments: [], facts: [] });
  });

  it('traced: two model calls and the tool between them, all children of the turn, with counts and never the query', async () => {
    // The shutdown flushes the traces; the session (and its kiosk) are done with.
    await rt.close();
    const [turn] = collector.named('kohami.turn');
    const children = collector.childrenOf(turn!);
    expect(children.map((s) => s.name)).toEqual(expect.arrayContaining(['execute_tool search_memory']));
    const calls = children.filter((s) => s.attributes['gen_ai.operation.name'] === 'chat');
    expect(calls.map((c) => c.attributes['gen_ai.response.finish_reasons'])).toEqual([['tool_calls'], ['stop']]);
    expect(calls[0]!.events.find((e) => e.name === 'tool_call')?.attributes).toEqual({ 'gen_ai.tool.name': 'search_memory' });
    const tool = children.find((s) => s.name === 'execute_tool search_memory')!;
    expect(tool.attributes).toEqual({ 'gen_ai.operation.name': 'execute_tool', 'gen_ai.tool.name': 'search_memory', 'kohami.memory.segments': 2, 'kohami.memory.facts': 0 });
    // In order (the SDK starts a span at Date.now(), whole milliseconds: within 1 ms).
    expect(tool.startNs + MS).toBeGreaterThanOrEqual(calls[0]!.endNs);
    expect(calls[1]!.startNs + MS).toBeGreaterThanOrEqual(tool.endNs);
    for (const words of ['Quimper', 'Séance', 'Yvonne']) expect(collector.bodies.join('\n')).not.toContain(words);
  });
});
