import { afterEach, describe, expect, it } from 'vitest';
import { createTracing, SPAN_EXPORT_TIMEOUT_MS } from '../../adapters/telemetry/tracing.ts';
import { OtlpReceiver } from '../support/otlp-receiver.ts';

describe('the tracer provider: OTLP/HTTP with a batch processor, or the no-op API', () => {
  let receiver: OtlpReceiver | null = null;
  afterEach(async () => {
    await receiver?.stop();
    receiver = null;
  });

  it('without an endpoint, spans do not record and shutdown has nothing to do', async () => {
    const tracing = await createTracing({ endpoint: undefined, serviceName: 'kohami-runtime', instanceId: 'p1' });
    expect(tracing.exporting).toBe(false);
    const span = tracing.tracer.startSpan('kohami.turn');
    expect(span.isRecording()).toBe(false);
    span.end();
    await tracing.shutdown(10);
  });

  it('with one, the batch leaves as JSON to <endpoint>/v1/traces with the service name (a trailing slash is fine)', async () => {
    receiver = await new OtlpReceiver().start();
    const tracing = await createTracing({ endpoint: `${receiver.url}/`, serviceName: 'kohami-a', instanceId: 'p1' });
    expect(tracing.exporting).toBe(true);
    tracing.tracer.startSpan('kohami.turn', { attributes: { 'kohami.flux': 'cache' } }).end();
    await tracing.shutdown(SPAN_EXPORT_TIMEOUT_MS);
    expect(receiver.spans.map((s) => [s.name, s.attributes, s.resource['service.name'], s.resource['service.instance.id']])).toEqual([['kohami.turn', { 'kohami.flux': 'cache' }, 'kohami-a', 'p1']]);
  });

  it('a collector that never answers does not hold the shutdown past its bound', async () => {
    receiver = await new OtlpReceiver().start();
    receiver.hang = true;
    const tracing = await createTracing({ endpoint: receiver.url, serviceName: 'kohami-runtime', instanceId: 'p1' });
    tracing.tracer.startSpan('kohami.turn').end();
    const stopped = tracing.shutdown(SPAN_EXPORT_TIMEOUT_MS / 4);
    await expect.poll(() => receiver!.open).toBe(1);
    await stopped;
    // Resolved while the export still waited for its answer (the exporter's own timeout is 4× longer).
    expect(receiver.open).toBe(1);
  });
});
