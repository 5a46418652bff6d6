import type { Logger } from 'pino';
import { setImmediate as yieldToIo } from 'node:timers/promises';
import PQueue from 'p-queue';
import type { PgMoodScoresRepository } from '../../adapters/postgres/pg-mood-scores.repository.ts';
import type { PgSegmentsRepository } from '../../adapters/postgres/pg-segments.repository.ts';
import {
  moodTier,
  type ConversationSummarizerPort,
  type Exchange,
  type MoodClassifierPort,
  type SegmentSummarizerPort,
} from '../../machines/memory/derivation.ts';
import type { ConsentPort } from '../../machines/memory/memory.port.ts';
import type { SessionClosed, Turn } from '../../machines/session/session.machine.ts';
import type { Metrics } from '../metrics.ts';
import type { SessionFacts } from './session-facts.ts';

export interface CloseJobsDeps {
  consents: ConsentPort;
  classifier: MoodClassifierPort;
  summarizer: ConversationSummarizerPort;
  /** Fact extraction, reconciled with the facts already held. */
  facts: Pick<SessionFacts, 'reconcile'>;
  segmentSummarizer: SegmentSummarizerPort;
  moodScores: PgMoodScoresRepository;
  segments: PgSegmentsRepository;
  metrics: Metrics;
  logger: Logger;
  concurrency: number;
}

type JobKind = 'mood' | 'extraction' | 'segment';

/**
 * The close-time derivations. A closed session's turns become one mood-and-summary job per
 * turn, one fact-extraction job and one segment (tier 2), run by a bounded in-process pool off
 * the hot path. The
 * transcript reaches them in memory only — no queue table, file or log ever holds it — so a
 * crash loses at most the derivations in flight; SIGTERM drains the pool first (`shutdown`).
 */
export class CloseJobs {
  private readonly queue: PQueue;
  /** Set once a shutdown gave up on the jobs left: their failures (database closing) are expected. */
  private abandoned = false;

  constructor(private readonly deps: CloseJobsDeps) {
    this.queue = new PQueue({ concurrency: deps.concurrency });
  }

  /** Jobs queued or running. */
  get pending(): number {
    return this.queue.size + this.queue.pending;
  }

  handle(event: SessionClosed): void {
    // An erased senior's data is gone; deriving from their last session would bring it back.
    if (event.reason === 'erased' || event.turns.length === 0) return;
    const { seniorId } = event;
    const exchanges = event.turns.map(toExchange);
    for (const turn of event.turns) void this.run('mood', seniorId, () => this.moodScoringCapture(seniorId, turn, exchanges));
    void this.run('extraction', seniorId, () => this.extractFacts(seniorId, exchanges));
    void this.run('segment', seniorId, () => this.archiveSegment(event, exchanges));
  }

  /** Waits for every queued job, at most `timeoutMs`; false if some were still running. */
  async drain(timeoutMs: number): Promise<boolean> {
    let timer: NodeJS.Timeout | undefined;
    const timeout = new Promise<false>((resolve) => (timer = setTimeout(() => resolve(false), timeoutMs)));
    const idle = this.queue.onIdle().then(() => true as const);
    const drained = await Promise.race([idle, timeout]);
    clearTimeout(timer);
    return drained;
  }

  /**
   * SIGTERM: the pool runs at `concurrency` (sub-agent calls wait on the network, not on this
   * process) for at most `budgetMs`. Whatever has not finished then is given up — queued jobs
   * never start — counted in `kohami_close_jobs_lost_total` and logged as a count. Returns it.
   */
  async shutdown(budgetMs: number, concurrency: number): Promise<number> {
    this.queue.concurrency = Math.max(this.queue.concurrency, concurrency);
    if (await this.drain(budgetMs)) return 0;
    const lost = this.pending;
    this.abandoned = true;
    this.queue.clear();
    this.deps.metrics.closeJobsLost.inc(lost);
    this.deps.logger.warn({ lost, budgetMs }, 'close-time jobs unfinished when the shutdown budget ran out: their derivations are lost');
    return lost;
  }

  /** Seed: MoodScoringCapture — consent gate, score, best-effort summary, one `per_turn` row. */
  private async moodScoringCapture(seniorId: string, turn: Turn, session: Exchange[]): Promise<'ok' | 'skipped'> {
    if (!(await this.deps.consents.hasConsent(seniorId, 'conversation'))) return 'skipped';
    const exchange = toExchange(turn);
    // Independent calls: together they take one sub-agent latency, not two.
    const [score, summary] = await Promise.all([this.deps.classifier.classify(exchange), this.deps.summarizer.summarize(exchange, session)]);
    await yieldToIo();
    await this.deps.moodScores.insert({ seniorId, score, tier: moodTier(score), summary, recordedAt: new Date(turn.startedAt) });
    return 'ok';
  }

  private async extractFacts(seniorId: string, exchanges: Exchange[]): Promise<'ok' | 'skipped'> {
    if (!(await this.deps.consents.hasConsent(seniorId, 'conversation'))) return 'skipped';
    await this.deps.facts.reconcile(seniorId, exchanges);
    return 'ok';
  }

  /** Tier 2: the session archived as one summarized segment, with its times and turn count. */
  private async archiveSegment(event: SessionClosed, exchanges: Exchange[]): Promise<'ok' | 'skipped'> {
    if (!(await this.deps.consents.hasConsent(event.seniorId, 'conversation'))) return 'skipped';
    const summary = await this.deps.segmentSummarizer.summarize(exchanges);
    await this.deps.segments.insert({
      seniorId: event.seniorId,
      summary,
      startedAt: new Date(event.startedAt),
      endedAt: new Date(event.endedAt),
      turnCount: event.turns.length,
    });
    return 'ok';
  }

  private async run(kind: JobKind, seniorId: string, job: () => Promise<'ok' | 'skipped'>): Promise<void> {
    await this.queue.add(async () => {
      // Jobs share the event loop with live sessions: each step lets pending kiosk I/O run first,
      // so a burst of derivations never holds the hot path for more than one step.
      await yieldToIo();
      const stop = this.deps.metrics.closeJobDuration.startTimer({ kind });
      try {
        const outcome = await job();
        this.deps.metrics.closeJobs.inc({ kind, outcome });
      } catch (err) {
        this.deps.metrics.closeJobs.inc({ kind, outcome: 'error' });
        if (!this.abandoned) this.deps.logger.warn({ err, seniorId, kind }, 'close-time job failed');
      } finally {
        stop();
      }
    });
  }
}

const toExchange = (turn: Turn): Exchange => ({ transcript: turn.transcript, replyText: turn.reply });
