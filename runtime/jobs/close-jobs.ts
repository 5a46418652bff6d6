import type { Logger } from 'pino';
import { setImmediate as yieldToIo } from 'node:timers/promises';
import type { ProviderGate } from '../../adapters/models/provider-gate.ts';
import type { PgMoodScoresRepository } from '../../adapters/postgres/pg-mood-scores.repository.ts';
import type { PgSegmentsRepository } from '../../adapters/postgres/pg-segments.repository.ts';
import {
  moodTier,
  type ConversationSummarizerPort,
  type Exchange,
  type FactOperation,
  type MoodClassifierPort,
  type SegmentSummarizerPort,
} from '../../machines/memory/derivation.ts';
import type { ConsentPort } from '../../machines/memory/memory.port.ts';
import type { SessionActor } from '../../machines/session/session.machine.ts';
import type { SessionClosed, Turn } from '../../machines/session/session.types.ts';
import type { Metrics } from '../metrics.ts';
import { DerivationPool, type Derivation, type PoolStats } from './derivation-pool.ts';
import type { SessionFacts } from './session-facts.ts';

export interface CloseJobsDeps {
  consents: ConsentPort;
  classifier: MoodClassifierPort;
  summarizer: ConversationSummarizerPort;
  /** Fact extraction, reconciled with the facts already held. */
  facts: Pick<SessionFacts, 'plan' | 'apply'>;
  segmentSummarizer: SegmentSummarizerPort;
  moodScores: PgMoodScoresRepository;
  segments: PgSegmentsRepository;
  metrics: Metrics;
  logger: Logger;
  /** The sub-agents' model goes through it: Retry-After pauses, transient failures reported per job. */
  gate: ProviderGate;
  concurrency: number;
  maxAttempts: number;
  maxTranscripts: number;
  maxHeldBytes: number;
}

/** What the per-turn derivation reads of a live session. */
export interface DerivedSession {
  sessionId: string;
  seniorId: string;
  actor: SessionActor;
}

/**
 * The derivations, in the seed's grain. Each turn's mood score and summary are derived soon after
 * the turn, while the session is live (`handleTurn`, called after its `reply.done` has left);
 * when the session closes, only the fact extraction and the segment (tier 2) remain, plus the
 * turns not derived yet (`handle`). Each turn is derived once: per live session, the count of
 * turns already handed over is kept (a number, never their text). The transcript reaches the jobs
 * in memory only, so a crash loses at most what is in flight; SIGTERM drains the pool first.
 */
export class CloseJobs {
  private readonly pool: DerivationPool;
  /** Per live session, how many of its turns (from the first) already have their mood job. */
  private readonly derivedTurns = new Map<string, number>();

  private readonly deps: CloseJobsDeps;
  private readonly moodListeners: Array<(seniorId: string) => void> = [];

  constructor(deps: CloseJobsDeps) {
    this.deps = deps;
    this.pool = new DerivationPool({
      concurrency: deps.concurrency,
      maxAttempts: deps.maxAttempts,
      maxTranscripts: deps.maxTranscripts,
      maxHeldBytes: deps.maxHeldBytes,
      gate: deps.gate,
      metrics: deps.metrics,
      logger: deps.logger,
    });
  }

  /** Called after each mood row is written (the caregivers' alerts evaluate the senior then). */
  onMoodWritten(listener: (seniorId: string) => void): void {
    this.moodListeners.push(listener);
  }

  /** Jobs queued, backing off or running. */
  get pending(): number {
    return this.pool.pending;
  }

  stats(): PoolStats {
    return this.pool.stats();
  }

  get peak(): { transcripts: number; bytes: number } {
    return this.pool.peak;
  }

  /**
   * A turn of a live session ended (its `reply.done` sent): its mood job, and those of any earlier
   * turn not handed over yet, are queued. Called off the actor's transition, so the turn is in the
   * snapshot; a session already closed is left to `handle`, which took its turns.
   */
  handleTurn(session: DerivedSession, turnId: string): void {
    const snapshot = session.actor.getSnapshot();
    if (snapshot.status !== 'active') return;
    const turns = snapshot.context.turns;
    let index = turns.length - 1;
    while (index >= 0 && turns[index]!.turnId !== turnId) index -= 1;
    const from = this.derivedTurns.get(session.sessionId) ?? 0;
    if (index < from) return;
    this.derivedTurns.set(session.sessionId, index + 1);
    this.submitMood(session.sessionId, session.seniorId, turns.slice(0, index + 1), from);
  }

  handle(event: SessionClosed): void {
    const from = this.derivedTurns.get(event.sessionId) ?? 0;
    this.derivedTurns.delete(event.sessionId);
    // An erased senior's data is gone; deriving from their last session would bring it back.
    if (event.reason === 'erased' || event.turns.length === 0) return;
    this.submitMood(event.sessionId, event.seniorId, event.turns, from);
    const exchanges = event.turns.map(toExchange);
    this.pool.submit(event.sessionId, held(exchanges), [this.extraction(event.seniorId, exchanges), this.segment(event, exchanges)]);
  }

  /** Erasure (here or through another process): the senior's pending derivations are dropped; a running one writes nothing. */
  invalidateSenior(seniorId: string): number {
    return this.pool.invalidateSenior(seniorId);
  }

  drain(timeoutMs: number): Promise<boolean> {
    return this.pool.drain(timeoutMs);
  }

  shutdown(budgetMs: number, concurrency: number): Promise<number> {
    return this.pool.shutdown(budgetMs, concurrency);
  }

  /** Mood jobs for turns[from..]; each also holds the session's earlier turns, which its summary must not repeat. */
  private submitMood(sessionId: string, seniorId: string, turns: readonly Turn[], from: number): void {
    if (from >= turns.length) return;
    const exchanges = turns.map(toExchange);
    const jobs = turns.slice(from).map((turn, i) => this.mood(seniorId, turn, exchanges[from + i]!, exchanges));
    this.pool.submit(sessionId, held(exchanges), jobs);
  }

  /** Seed: MoodScoringCapture — consent gate, score, best-effort summary, one `per_turn` row. */
  private mood(seniorId: string, turn: Turn, exchange: Exchange, session: Exchange[]): Derivation<{ score: number; summary: string | null }> {
    const { consents, classifier, summarizer, moodScores } = this.deps;
    return {
      kind: 'mood',
      seniorId,
      derive: async () => {
        if (!(await consents.hasConsent(seniorId, 'conversation'))) return 'skipped';
        // Independent calls: together they take one sub-agent latency, not two.
        const [score, summary] = await Promise.all([classifier.classify(exchange), summarizer.summarize(exchange, session)]);
        return { score, summary };
      },
      write: async ({ score, summary }) => {
        await moodScores.insert({ seniorId, score, tier: moodTier(score), summary, recordedAt: new Date(turn.startedAt) });
        for (const listener of this.moodListeners) listener(seniorId);
      },
    };
  }

  private extraction(seniorId: string, exchanges: Exchange[]): Derivation<FactOperation[]> {
    const { consents, facts } = this.deps;
    // Operations already applied: a retried write resumes after them.
    let applied = 0;
    return {
      kind: 'extraction',
      seniorId,
      derive: async () => ((await consents.hasConsent(seniorId, 'conversation')) ? facts.plan(seniorId, exchanges) : 'skipped'),
      write: async (operations) => {
        for (; applied < operations.length; applied++) {
          await yieldToIo();
          await facts.apply(seniorId, operations[applied]!);
        }
      },
    };
  }

  /** Tier 2: the session archived as one summarized segment, with its times and turn count. */
  private segment(event: SessionClosed, exchanges: Exchange[]): Derivation<string | null> {
    const { consents, segmentSummarizer, segments } = this.deps;
    return {
      kind: 'segment',
      seniorId: event.seniorId,
      derive: async () => ((await consents.hasConsent(event.seniorId, 'conversation')) ? segmentSummarizer.summarize(exchanges) : 'skipped'),
      write: async (summary) => {
        await segments.insert({
          seniorId: event.seniorId,
          summary,
          startedAt: new Date(event.startedAt),
          endedAt: new Date(event.endedAt),
          turnCount: event.turns.length,
        });
      },
    };
  }
}

const toExchange = (turn: Turn): Exchange => ({ transcript: turn.transcript, replyText: turn.reply });

/** What the jobs of a session hold: its turns, as UTF-16 text. */
const held = (exchanges: readonly Exchange[]) => ({
  transcripts: exchanges.length,
  bytes: exchanges.reduce((n, e) => n + 2 * (e.transcript.length + e.replyText.length), 0),
});
