import { trace, type Tracer } from '@opentelemetry/api';

export const TRACER_NAME = 'kohami-runtime';

export interface TracingSettings {
  /** OTEL_EXPORTER_OTLP_ENDPOINT: the collector's base URL (`/v1/traces` is appended). Unset: no tracing. */
  endpoint: string | undefined;
  serviceName: string;
  /** `service.instance.id`: this process among those sharing the database. */
  instanceId: string;
}

export interface Tracing {
  readonly tracer: Tracer;
  /** True when spans are recorded and exported; false when they go through the API's no-op tracer. */
  readonly exporting: boolean;
  /** Exports the spans queued so far (benchmarks). */
  flush(): Promise<void>;
  /** Exports the spans still queued, then stops; never waits longer than `timeoutMs`. */
  shutdown(timeoutMs: number): Promise<void>;
}

/**
 * Bounds on the export: the batch queue holds at most this many ended spans (more are dropped, not
 * buffered without end), an export request may take this long, and spans leave every second.
 */
export const SPAN_QUEUE_MAX = 2048;
export const SPAN_BATCH_MAX = 512;
export const SPAN_EXPORT_TIMEOUT_MS = 2_000;
export const SPAN_EXPORT_DELAY_MS = 1_000;

/**
 * The process's tracer. Off (no endpoint), it is the OpenTelemetry API's no-op tracer: a span costs
 * an object and a few calls that do nothing, and the SDK is not even imported (~20 MiB resident). On, a tracer
 * provider of its own — never registered as the global one, so no library that traces through the
 * global API (the Mistral SDK has OpenTelemetry peers) adds spans the never-verbatim tests do not
 * cover — with a batch processor and the OTLP/HTTP exporter (JSON bodies).
 */
export async function createTracing(settings: TracingSettings): Promise<Tracing> {
  if (!settings.endpoint) return { tracer: trace.getTracer(TRACER_NAME), exporting: false, flush: async () => {}, shutdown: async () => {} };
  const [{ OTLPTraceExporter }, { resourceFromAttributes }, { BasicTracerProvider, BatchSpanProcessor }] = await Promise.all([
    import('@opentelemetry/exporter-trace-otlp-http'),
    import('@opentelemetry/resources'),
    import('@opentelemetry/sdk-trace-base'),
  ]);
  const exporter = new OTLPTraceExporter({ url: `${settings.endpoint.replace(/\/+$/, '')}/v1/traces`, timeoutMillis: SPAN_EXPORT_TIMEOUT_MS });
  const provider = new BasicTracerProvider({
    resource: resourceFromAttributes({ 'service.name': settings.serviceName, 'service.instance.id': settings.instanceId }),
    spanProcessors: [
      new BatchSpanProcessor(exporter, {
        maxQueueSize: SPAN_QUEUE_MAX,
        maxExportBatchSize: SPAN_BATCH_MAX,
        scheduledDelayMillis: SPAN_EXPORT_DELAY_MS,
        exportTimeoutMillis: SPAN_EXPORT_TIMEOUT_MS,
      }),
    ],
  });
  let stopping: Promise<void> | null = null;
  return {
    tracer: provider.getTracer(TRACER_NAME),
    exporting: true,
    flush: () => provider.forceFlush(),
    shutdown: (timeoutMs) =>
      (stopping ??= new Promise<void>((resolve) => {
        // A collector that does not answer must not hold the process past its shutdown bound.
        const timer = setTimeout(resolve, timeoutMs);
        provider
          .shutdown()
          .catch(() => {})
          .finally(() => {
            clearTimeout(timer);
            resolve();
          });
      })),
  };
}
