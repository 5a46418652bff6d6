import { ROOT_CONTEXT, SpanStatusCode, trace, type Attributes, type Context, type HrTime, type Span, type SpanOptions, type Tracer } from '@opentelemetry/api';
import { TRACER_NAME } from './tracing.ts';

/**
 * What a span may carry: fixed span names, and attributes that are ids (session, senior), enums
 * (flow, outcome, mode, reasons), counts, flags and milliseconds. Never a word of the conversation —
 * no transcript, reply, prompt, fact or query — and never an error's message (a provider's may quote
 * the prompt): an error is its type only.
 */
export const SPANS = {
  turn: 'kohami.turn',
  cacheFlux: 'kohami.cacheflux',
  recall: 'kohami.recall',
  consent: 'kohami.recall.consent',
  search: 'kohami.recall.search',
  semanticCache: 'kohami.semantic_cache',
  transcription: 'kohami.transcription',
  speech: 'kohami.speech',
} as const;

export interface TurnIds {
  sessionId: string;
  seniorId: string;
  turnId: string;
}

/** How a turn ended, from its `reply.done` (never its text). */
export interface TurnOutcome {
  flux: string;
  latencyMs: number;
  interrupted?: boolean;
  sosReason?: string;
}

/** A voice turn's timings before the turn (performance.now() values): the end of speech, the final transcript. */
export interface VoiceTurnTiming {
  speechStoppedAt: number;
  transcribedAt: number;
  endpointingMs: number;
}

interface ActiveTurn {
  ids: TurnIds;
  span: Span;
  context: Context;
  /** The stage running now (recall), whose queries are its children; null: the turn's. */
  stage: Context | null;
}

/**
 * A performance.now() reading as an absolute time. Given as a number, the SDK would shift it by an
 * offset it reads per span from Date.now() (whole milliseconds): a turn and its transcription, from
 * the same reading, would not start at the same time.
 */
export function hrTimeOf(performanceMs: number): HrTime {
  const ms = performance.timeOrigin + performanceMs;
  const seconds = Math.floor(ms / 1000);
  return [seconds, Math.round((ms - seconds * 1000) * 1e6)];
}

/** An error as a span shows it: its type, never its message. */
export function errorType(err: unknown): string {
  return err instanceof Error ? err.name : typeof err;
}

function isAbort(err: unknown): boolean {
  return err instanceof Error && (err.name === 'AbortError' || err.name === 'TimeoutError');
}

/** Ends `span` for a stage that threw: an abort (the turn moved on) is not an error. */
export function failSpan(span: Span, err: unknown): void {
  if (isAbort(err)) span.setAttribute('kohami.aborted', true);
  else {
    span.setAttribute('error.type', errorType(err));
    span.setStatus({ code: SpanStatusCode.ERROR });
  }
}

/**
 * One `kohami.turn` span per turn, a root of its own trace, and the stages' spans as its children.
 * Parents are explicit (no context manager): a stage finds its turn by the senior's id, as every port
 * is called with it, and one senior has one live session, which runs one turn at a time. A stage
 * called when the senior has no turn open — the preemptive turn's work, done before the turn it may
 * become — has no span. At most two turns per senior are held: the one running, and one cut by it
 * (barge-in) whose `reply.done` comes just after the next one began.
 */
export class TurnTraces {
  private readonly bySenior = new Map<string, ActiveTurn>();
  private readonly cut = new Map<string, ActiveTurn>();

  constructor(readonly tracer: Tracer = trace.getTracer(TRACER_NAME)) {}

  /** Opens the turn's span (voice: from the end of speech, with its transcription); returns its context, for spans that outlive it. */
  begin(ids: TurnIds, mode: 'text' | 'voice', voice?: VoiceTurnTiming): Context {
    const span = this.tracer.startSpan(
      SPANS.turn,
      { attributes: { 'session.id': ids.sessionId, 'kohami.senior.id': ids.seniorId, 'kohami.turn.mode': mode }, ...(voice ? { startTime: hrTimeOf(voice.speechStoppedAt) } : {}) },
      ROOT_CONTEXT,
    );
    const context = trace.setSpan(ROOT_CONTEXT, span);
    if (voice) {
      span.setAttribute('kohami.voice.endpointing_ms', voice.endpointingMs);
      this.tracer.startSpan(SPANS.transcription, { startTime: hrTimeOf(voice.speechStoppedAt) }, context).end(hrTimeOf(voice.transcribedAt));
    }
    const running = this.bySenior.get(ids.seniorId);
    if (running) {
      this.finish(this.cut.get(ids.seniorId), { 'kohami.outcome': 'abandoned' });
      this.cut.set(ids.seniorId, running);
    }
    this.bySenior.set(ids.seniorId, { ids, span, context, stage: null });
    return context;
  }

  /** A voice utterance that brought no transcript in time: a turn of its own, answered by the SOS line. */
  untranscribed(ids: TurnIds, speechStoppedAt: number, err: unknown): void {
    const span = this.tracer.startSpan(
      SPANS.turn,
      { startTime: hrTimeOf(speechStoppedAt), attributes: { 'session.id': ids.sessionId, 'kohami.senior.id': ids.seniorId, 'kohami.turn.mode': 'voice' } },
      ROOT_CONTEXT,
    );
    const transcription = this.tracer.startSpan(SPANS.transcription, { startTime: hrTimeOf(speechStoppedAt) }, trace.setSpan(ROOT_CONTEXT, span));
    failSpan(transcription, err);
    transcription.end();
    span.setAttributes({ 'kohami.flux': 'sos', 'kohami.outcome': 'sos', 'kohami.sos_reason': 'transcription' });
    span.end();
  }

  /** The turn's `reply.done`: its flow and outcome; a turn other than the senior's running or cut one is ignored. */
  end(ids: TurnIds, outcome: TurnOutcome): void {
    const attributes: Attributes = {
      'kohami.flux': outcome.flux,
      'kohami.outcome': outcome.flux === 'sos' ? 'sos' : 'answered',
      'kohami.latency_ms': outcome.latencyMs,
      'kohami.interrupted': outcome.interrupted === true,
      ...(outcome.sosReason ? { 'kohami.sos_reason': outcome.sosReason } : {}),
    };
    for (const held of [this.bySenior, this.cut]) {
      const turn = held.get(ids.seniorId);
      if (turn && turn.ids.sessionId === ids.sessionId && turn.ids.turnId === ids.turnId) {
        held.delete(ids.seniorId);
        this.finish(turn, attributes);
      }
    }
  }

  /** The session closed: a turn of it still open (no `reply.done` came) ends here. */
  closeSession(seniorId: string, sessionId: string): void {
    for (const held of [this.bySenior, this.cut]) {
      const turn = held.get(seniorId);
      if (turn?.ids.sessionId !== sessionId) continue;
      held.delete(seniorId);
      this.finish(turn, { 'kohami.outcome': 'closed' });
    }
  }

  /** Turns open now (tests: none is left behind). */
  get open(): number {
    return this.bySenior.size + this.cut.size;
  }

  /** A span under the senior's running turn (or its running stage); null when the senior has no turn open. */
  startStage(seniorId: string, name: string, options?: SpanOptions): Span | null {
    const turn = this.bySenior.get(seniorId);
    if (!turn) return null;
    return this.tracer.startSpan(name, options, turn.stage ?? turn.context);
  }

  /**
   * Runs an asynchronous stage of the senior's turn in its span: the stage's own calls (recall's
   * queries) are its children. `describe` turns the result into attributes (counts, enums).
   */
  async stage<T>(seniorId: string, name: string, run: () => Promise<T>, describe?: (value: T) => Attributes): Promise<T> {
    const turn = this.bySenior.get(seniorId);
    if (!turn) return run();
    const span = this.tracer.startSpan(name, undefined, turn.stage ?? turn.context);
    const outer = turn.stage;
    turn.stage = trace.setSpan(ROOT_CONTEXT, span);
    try {
      const value = await run();
      if (describe) span.setAttributes(describe(value));
      return value;
    } catch (err) {
      failSpan(span, err);
      throw err;
    } finally {
      turn.stage = outer;
      span.end();
    }
  }

  /** A span under a turn's context, which may have ended (the first audio of a reply comes after its text). */
  startUnder(context: Context, name: string): Span {
    return this.tracer.startSpan(name, undefined, context);
  }

  private finish(turn: ActiveTurn | undefined, attributes: Attributes): void {
    if (!turn) return;
    turn.span.setAttributes(attributes);
    if (attributes['kohami.outcome'] === 'sos') turn.span.setStatus({ code: SpanStatusCode.ERROR });
    turn.span.end();
  }
}
