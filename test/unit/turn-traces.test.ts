import { SpanStatusCode } from '@opentelemetry/api';
import { BasicTracerProvider, InMemorySpanExporter, SimpleSpanProcessor, type ReadableSpan } from '@opentelemetry/sdk-trace-base';
import { beforeEach, describe, expect, it } from 'vitest';
import { SPANS, TurnTraces } from '../../adapters/telemetry/turn-traces.ts';

const ids = (turnId: string, sessionId = 's1') => ({ sessionId, seniorId: 'senior-1', turnId });

describe('TurnTraces: a span per turn, its stages as children, found by the senior', () => {
  let exporter: InMemorySpanExporter;
  let traces: TurnTraces;
  const ended = (): ReadableSpan[] => exporter.getFinishedSpans();
  const named = (name: string) => ended().filter((s) => s.name === name);

  beforeEach(() => {
    exporter = new InMemorySpanExporter();
    traces = new TurnTraces(new BasicTracerProvider({ spanProcessors: [new SimpleSpanProcessor(exporter)] }).getTracer('test'));
  });

  it('a barge-in: the next turn begins before the cut one’s reply.done, and each ends with its own outcome', () => {
    traces.begin(ids('t1'), 'text');
    traces.begin(ids('t2'), 'text');
    // The cut turn's reply.done, then the new one's.
    traces.end(ids('t1'), { flux: 'agent', latencyMs: 12, interrupted: true });
    expect(traces.open).toBe(1);
    traces.end(ids('t2'), { flux: 'sos', latencyMs: 30, sosReason: 'budget' });
    expect(traces.open).toBe(0);
    const [first, second] = named(SPANS.turn);
    expect(first!.attributes).toMatchObject({ 'kohami.flux': 'agent', 'kohami.outcome': 'answered', 'kohami.interrupted': true, 'kohami.latency_ms': 12 });
    expect(second!.attributes).toMatchObject({ 'kohami.flux': 'sos', 'kohami.outcome': 'sos', 'kohami.sos_reason': 'budget' });
    expect(second!.status.code).toBe(SpanStatusCode.ERROR);
  });

  it('a reply.done of another session of the senior (a takeover) ends nothing of this one; its close ends what is left', () => {
    traces.begin(ids('t1', 'new'), 'text');
    traces.end(ids('t1', 'old'), { flux: 'agent', latencyMs: 1 });
    expect(traces.open).toBe(1);
    traces.closeSession('senior-1', 'new');
    expect(traces.open).toBe(0);
    expect(named(SPANS.turn)[0]!.attributes).toMatchObject({ 'kohami.outcome': 'closed', 'session.id': 'new' });
  });

  it('a stage nests its own calls, and a call with no turn open (a preemptive turn’s work) has no span', async () => {
    expect(await traces.stage('senior-1', SPANS.recall, async () => 'no turn')).toBe('no turn');
    expect(traces.startStage('senior-1', SPANS.cacheFlux)).toBeNull();
    traces.begin(ids('t1'), 'text');
    await traces.stage('senior-1', SPANS.recall, () => traces.stage('senior-1', SPANS.consent, async () => true, (granted) => ({ 'kohami.consent.granted': granted })));
    await traces.stage('senior-1', SPANS.semanticCache, async () => ({ kind: 'miss' }));
    traces.end(ids('t1'), { flux: 'agent', latencyMs: 5 });
    const turn = named(SPANS.turn)[0]!;
    const recall = named(SPANS.recall)[0]!;
    expect(ended()).toHaveLength(4);
    expect(recall.parentSpanContext?.spanId).toBe(turn.spanContext().spanId);
    expect(named(SPANS.consent)[0]!.parentSpanContext?.spanId).toBe(recall.spanContext().spanId);
    expect(named(SPANS.consent)[0]!.attributes).toEqual({ 'kohami.consent.granted': true });
    // After recall, the next stage is the turn's child again.
    expect(named(SPANS.semanticCache)[0]!.parentSpanContext?.spanId).toBe(turn.spanContext().spanId);
  });

  it('a failed stage shows its error type, never its message; an abort is not an error', async () => {
    traces.begin(ids('t1'), 'text');
    await expect(traces.stage('senior-1', SPANS.recall, async () => Promise.reject(new TypeError('le mot secret du prompt')))).rejects.toThrow(TypeError);
    const abort = Object.assign(new Error('aborted'), { name: 'AbortError' });
    await expect(traces.stage('senior-1', SPANS.semanticCache, async () => Promise.reject(abort))).rejects.toBe(abort);
    const failed = named(SPANS.recall)[0]!;
    expect(failed.attributes).toEqual({ 'error.type': 'TypeError' });
    expect(failed.status.code).toBe(SpanStatusCode.ERROR);
    expect(failed.events).toEqual([]);
    expect(JSON.stringify(failed.status)).not.toContain('secret');
    const aborted = named(SPANS.semanticCache)[0]!;
    expect(aborted.attributes).toEqual({ 'kohami.aborted': true });
    expect(aborted.status.code).toBe(SpanStatusCode.UNSET);
  });

  it('a voice turn starts at the end of speech, its transcription the first child; a lost transcription is a SOS turn of its own', () => {
    const stoppedAt = performance.now();
    traces.begin(ids('v1'), 'voice', { speechStoppedAt: stoppedAt, transcribedAt: stoppedAt + 120, endpointingMs: 400 });
    traces.end(ids('v1'), { flux: 'agent', latencyMs: 300 });
    const turn = named(SPANS.turn)[0]!;
    const transcription = named(SPANS.transcription)[0]!;
    expect(turn.attributes).toMatchObject({ 'kohami.turn.mode': 'voice', 'kohami.voice.endpointing_ms': 400 });
    expect(transcription.parentSpanContext?.spanId).toBe(turn.spanContext().spanId);
    expect(transcription.startTime).toEqual(turn.startTime);
    const ms = (t: [number, number]) => t[0] * 1e3 + t[1] / 1e6;
    expect(ms(transcription.endTime) - ms(transcription.startTime)).toBeCloseTo(120, 0);

    traces.untranscribed(ids('v2'), performance.now(), Object.assign(new Error('late'), { name: 'TranscriptionTimeoutError' }));
    const lost = named(SPANS.turn)[1]!;
    expect(lost.attributes).toMatchObject({ 'kohami.outcome': 'sos', 'kohami.sos_reason': 'transcription' });
    expect(named(SPANS.transcription)[1]!.attributes).toEqual({ 'error.type': 'TranscriptionTimeoutError' });
    expect(traces.open).toBe(0);
  });
});
