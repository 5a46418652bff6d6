import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { FakeMistral } from '../support/fake-mistral.ts';
import { KioskClient } from '../support/kiosk-client.ts';
import { MS, OtlpReceiver, type ReceivedSpan } from '../support/otlp-receiver.ts';
import { KIOSK_TOKEN, startTestRuntime, type TestRuntime } from '../support/runtime.ts';

const SPAN_KIND_CLIENT = 3;
const STATUS_ERROR = 2;

/** One session of turns (each after its `before`, if any), ended. */
async function session(rt: TestRuntime, turns: Array<[string, string, (() => void)?]>): Promise<Array<Record<string, unknown>>> {
  const kiosk = await KioskClient.connect(rt.wsUrl, KIOSK_TOKEN);
  const ready = await kiosk.start();
  const done: Array<Record<string, unknown>> = [ready];
  for (const [turnId, transcript, before] of turns) {
    before?.();
    done.push(await kiosk.turn(turnId, transcript));
  }
  kiosk.send({ type: 'session.end' });
  await kiosk.next('session.closed');
  kiosk.close();
  return done;
}

describe('traces: a span per turn, a child per stage, exported over OTLP/HTTP', () => {
  let mistral: FakeMistral;
  let receiver: OtlpReceiver;
  let rt: TestRuntime;
  let sessionId: string;
  let seniorId: string;

  beforeAll(async () => {
    mistral = await new FakeMistral().start();
    mistral.mode = { kind: 'stream', chunks: ['Je vous écoute, ', 'racontez-moi.'] };
    receiver = await new OtlpReceiver().start();
    rt = await startTestRuntime({}, { MISTRAL_API_KEY: 'test-key', MISTRAL_BASE_URL: mistral.baseUrl, OTEL_EXPORTER_OTLP_ENDPOINT: receiver.url, OTEL_SERVICE_NAME: 'kohami-test' });
    expect(rt.tracesExported).toBe(true);
    const [ready, cache, agent, sos] = await session(rt, [
      ['t1', 'Bonjour'],
      ['t2', 'Je suis allée au marché ce matin'],
      // The model fails (503), is retried once, fails again: the SOS line.
      ['t3', 'Pouvez-vous me rappeler le rendez-vous chez le dentiste', () => (mistral.mode = { kind: 'status', status: 503 })],
    ]);
    expect(cache).toMatchObject({ flux: 'cache' });
    expect(agent).toMatchObject({ flux: 'agent' });
    expect(sos).toMatchObject({ flux: 'sos', reason: 'model_error' });
    sessionId = String(ready!.sessionId);
    seniorId = String(ready!.seniorId);
    expect(rt.traces.open).toBe(0);
    // The shutdown exports what the batch still holds.
    await rt.close();
  }, 60_000);

  afterAll(async () => {
    await rt?.close();
    await receiver?.stop();
    await mistral?.stop();
  });

  const turnSpan = (flux: string): ReceivedSpan => {
    const turns = receiver.named('kohami.turn').filter((s) => s.attributes['kohami.flux'] === flux);
    expect(turns).toHaveLength(1);
    return turns[0]!;
  };

  it('each turn is a root span with its flow, outcome and opaque ids, under the configured service name', () => {
    expect(receiver.named('kohami.turn')).toHaveLength(3);
    for (const flux of ['cache', 'agent']) {
      const turn = turnSpan(flux);
      expect(turn.parentSpanId).toBeUndefined();
      expect(turn.attributes).toMatchObject({ 'kohami.outcome': 'answered', 'kohami.turn.mode': 'text', 'session.id': sessionId, 'kohami.senior.id': seniorId, 'kohami.interrupted': false });
      expect(turn.attributes['kohami.latency_ms']).toEqual(expect.any(Number));
      expect(turn.resource).toMatchObject({ 'service.name': 'kohami-test', 'service.instance.id': rt.processId });
      expect(turn.endNs).toBeGreaterThanOrEqual(turn.startNs);
    }
    // Two turns, two traces.
    expect(turnSpan('cache').traceId).not.toBe(turnSpan('agent').traceId);
  });

  it('a CacheFlux turn has the one stage, a hit', () => {
    const children = receiver.childrenOf(turnSpan('cache'));
    expect(children.map((s) => s.name)).toEqual(['kohami.cacheflux']);
    expect(children[0]!.attributes).toEqual({ 'kohami.cacheflux.hit': true });
  });

  it('an agent turn: CacheFlux missed, recall with its consent query and memory search, the semantic cache, the model call', () => {
    const turn = turnSpan('agent');
    const children = receiver.childrenOf(turn);
    expect(children.map((s) => s.name).sort()).toEqual(['chat mistral-small-2603', 'kohami.cacheflux', 'kohami.recall', 'kohami.semantic_cache']);
    const byName = new Map(children.map((s) => [s.name, s]));
    expect(byName.get('kohami.cacheflux')!.attributes).toEqual({ 'kohami.cacheflux.hit': false });
    const recall = byName.get('kohami.recall')!;
    expect(recall.attributes).toEqual({ 'kohami.recall.outcome': 'facts', 'kohami.recall.facts': 0 });
    const queries = receiver.childrenOf(recall);
    expect(queries.map((s) => s.name)).toEqual(['kohami.recall.consent', 'kohami.recall.search']);
    expect(queries[0]!.attributes).toEqual({ 'kohami.consent.category': 'conversation', 'kohami.consent.granted': true });
    expect(queries[1]!.attributes).toEqual({ 'kohami.recall.limit': 5, 'kohami.recall.facts': 0 });
    expect(['hit', 'miss', 'bypass']).toContain(byName.get('kohami.semantic_cache')!.attributes['kohami.semantic_cache.result']);
    // The stages run in order, within the turn (the SDK starts a span at Date.now(), whole milliseconds: within 1 ms).
    const order = ['kohami.cacheflux', 'kohami.recall', 'kohami.semantic_cache', 'chat mistral-small-2603'].map((n) => byName.get(n)!);
    for (let i = 1; i < order.length; i += 1) expect(order[i]!.startNs + MS).toBeGreaterThanOrEqual(order[i - 1]!.endNs);
    for (const stage of order) expect(stage.startNs + MS).toBeGreaterThanOrEqual(turn.startNs);
    expect(turn.endNs + MS).toBeGreaterThanOrEqual(order.at(-1)!.endNs);
  });

  it('the model call carries the GenAI semantic conventions: provider, model, tokens, finish reason, first token', () => {
    const model = receiver.named('chat mistral-small-2603')[0]!;
    expect(model.kind).toBe(SPAN_KIND_CLIENT);
    expect(model.attributes).toMatchObject({
      'gen_ai.operation.name': 'chat',
      'gen_ai.provider.name': 'mistral_ai',
      'gen_ai.system': 'mistral_ai',
      'gen_ai.request.model': 'mistral-small-2603',
      'gen_ai.request.max_tokens': 300,
      // The fake's usage and finish reason, as Mistral streams them.
      'gen_ai.usage.input_tokens': 5,
      'gen_ai.usage.output_tokens': 3,
      'gen_ai.response.finish_reasons': ['stop'],
    });
    expect(model.attributes['kohami.first_token_ms']).toEqual(expect.any(Number));
    expect(model.events.map((e) => e.name)).toContain('first_token');
    expect(model.status.code).not.toBe(STATUS_ERROR);
  });

  it('a turn whose model failed twice ends on the SOS line: both calls show their error type, the turn its reason', () => {
    const turn = turnSpan('sos');
    expect(turn.attributes).toMatchObject({ 'kohami.outcome': 'sos', 'kohami.sos_reason': 'model_error' });
    expect(turn.status.code).toBe(STATUS_ERROR);
    const calls = receiver.childrenOf(turn).filter((s) => s.name === 'chat mistral-small-2603');
    expect(calls).toHaveLength(2);
    for (const call of calls) {
      expect(call.status.code).toBe(STATUS_ERROR);
      expect(call.attributes['error.type']).toBe('AI_APICallError');
      expect(call.attributes['gen_ai.usage.output_tokens']).toBeUndefined();
      expect(call.events).toEqual([]);
    }
  });

  it('no span carries the conversation: no transcript, reply, prompt or error text in names, attributes or events', () => {
    const exported = receiver.bodies.join('\n');
    for (const words of ['Bonjour', 'marché', 'dentiste', 'écoute', 'racontez', 'Bien sûr', 'Marie', 'HTTP 503']) expect(exported).not.toContain(words);
  });
});

describe('traces are off unless OTEL_EXPORTER_OTLP_ENDPOINT is set', () => {
  it('no request reaches a collector, even one the standard variables name, and spans do not record', async () => {
    const receiver = await new OtlpReceiver().start();
    // What an SDK left to read the environment would pick up: the runtime reads only its configuration.
    process.env.OTEL_EXPORTER_OTLP_TRACES_ENDPOINT = `${receiver.url}/v1/traces`;
    const rt = await startTestRuntime();
    try {
      expect(rt.tracesExported).toBe(false);
      const span = rt.traces.tracer.startSpan('kohami.turn');
      expect(span.isRecording()).toBe(false);
      span.end();
      const [, agent] = await session(rt, [['t1', 'Je suis allée au marché ce matin']]);
      expect(agent).toMatchObject({ flux: 'agent' });
      expect(rt.traces.open).toBe(0);
    } finally {
      await rt.close();
      delete process.env.OTEL_EXPORTER_OTLP_TRACES_ENDPOINT;
      await receiver.stop();
    }
    expect(receiver.requests).toBe(0);
  }, 30_000);
});
