import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { gunzipSync } from 'node:zlib';

/**
 * A millisecond in a span's nanoseconds: the SDK starts a span at Date.now() (whole milliseconds), so
 * the order of two spans is read within this.
 */
export const MS = 1_000_000n;

/** One exported span, decoded from OTLP/JSON: attribute values flattened to JS values. */
export interface ReceivedSpan {
  traceId: string;
  spanId: string;
  parentSpanId: string | undefined;
  name: string;
  kind: number;
  startNs: bigint;
  endNs: bigint;
  attributes: Record<string, unknown>;
  events: Array<{ name: string; attributes: Record<string, unknown> }>;
  status: { code?: number };
  resource: Record<string, unknown>;
}

interface OtlpValue {
  stringValue?: string;
  boolValue?: boolean;
  intValue?: string | number;
  doubleValue?: number;
  arrayValue?: { values?: OtlpValue[] };
}
type OtlpAttributes = Array<{ key: string; value: OtlpValue }> | undefined;

function valueOf(v: OtlpValue): unknown {
  if (v.stringValue !== undefined) return v.stringValue;
  if (v.boolValue !== undefined) return v.boolValue;
  if (v.intValue !== undefined) return Number(v.intValue);
  if (v.doubleValue !== undefined) return v.doubleValue;
  if (v.arrayValue) return (v.arrayValue.values ?? []).map(valueOf);
  return null;
}

function attributesOf(list: OtlpAttributes): Record<string, unknown> {
  return Object.fromEntries((list ?? []).map(({ key, value }) => [key, valueOf(value)]));
}

/**
 * A local OTLP/HTTP collector for traces (`POST /v1/traces`, JSON bodies, as
 * @opentelemetry/exporter-trace-otlp-http sends them): it keeps every request body as received —
 * what the never-verbatim tests search — and the spans decoded from them.
 */
export class OtlpReceiver {
  /** Every export request's body, as text (after gzip, if it came compressed). */
  readonly bodies: string[] = [];
  readonly spans: ReceivedSpan[] = [];
  /** Requests of any kind that reached the server. */
  requests = 0;
  /** A collector that never answers: requests are read and kept open (`open` counts them). */
  hang = false;
  open = 0;
  private server!: Server;
  /** The collector's base URL: what OTEL_EXPORTER_OTLP_ENDPOINT is set to. */
  url = '';

  async start(): Promise<this> {
    this.server = createServer((req, res) => {
      this.requests += 1;
      const chunks: Buffer[] = [];
      req.on('data', (c: Buffer) => chunks.push(c));
      req.on('end', () => {
        let raw = Buffer.concat(chunks);
        if (req.headers['content-encoding'] === 'gzip') raw = gunzipSync(raw);
        if (req.method !== 'POST' || req.url !== '/v1/traces' || !String(req.headers['content-type']).startsWith('application/json')) {
          res.writeHead(415).end();
          return;
        }
        const body = raw.toString('utf8');
        this.bodies.push(body);
        this.decode(JSON.parse(body));
        if (this.hang) {
          this.open += 1;
          res.once('close', () => (this.open -= 1));
          return;
        }
        res.writeHead(200, { 'content-type': 'application/json' }).end('{}');
      });
    });
    await new Promise<void>((resolve) => this.server.listen(0, '127.0.0.1', resolve));
    this.url = `http://127.0.0.1:${(this.server.address() as AddressInfo).port}`;
    return this;
  }

  async stop(): Promise<void> {
    this.server.closeAllConnections();
    await new Promise<void>((resolve) => this.server.close(() => resolve()));
  }

  /** The spans named `name`. */
  named(name: string): ReceivedSpan[] {
    return this.spans.filter((s) => s.name === name);
  }

  /** The direct children of `parent`. */
  childrenOf(parent: ReceivedSpan): ReceivedSpan[] {
    return this.spans.filter((s) => s.traceId === parent.traceId && s.parentSpanId === parent.spanId);
  }

  private decode(body: {
    resourceSpans?: Array<{
      resource?: { attributes?: OtlpAttributes };
      scopeSpans?: Array<{
        spans?: Array<{
          traceId: string;
          spanId: string;
          parentSpanId?: string;
          name: string;
          kind: number;
          startTimeUnixNano: string | number;
          endTimeUnixNano: string | number;
          attributes?: OtlpAttributes;
          events?: Array<{ name: string; attributes?: OtlpAttributes }>;
          status?: { code?: number };
        }>;
      }>;
    }>;
  }): void {
    for (const rs of body.resourceSpans ?? []) {
      const resource = attributesOf(rs.resource?.attributes);
      for (const ss of rs.scopeSpans ?? []) {
        for (const s of ss.spans ?? []) {
          this.spans.push({
            traceId: s.traceId,
            spanId: s.spanId,
            parentSpanId: s.parentSpanId || undefined,
            name: s.name,
            kind: s.kind,
            startNs: BigInt(s.startTimeUnixNano),
            endNs: BigInt(s.endTimeUnixNano),
            attributes: attributesOf(s.attributes),
            events: (s.events ?? []).map((e) => ({ name: e.name, attributes: attributesOf(e.attributes) })),
            status: s.status ?? {},
            resource,
          });
        }
      }
    }
  }
}
