import type { Logger } from 'pino';
import { setImmediate as yieldToIo } from 'node:timers/promises';
import { isTransientModelError, type ProviderGate } from '../../adapters/models/provider-gate.ts';
import { isTransientDatabaseError } from '../../adapters/postgres/transient-errors.ts';
import type { Metrics } from '../metrics.ts';

export type JobKind = 'mood' | 'extraction' | 'segment';
export type DropReason = 'memory_bound' | 'erased';

/** First back-off after a transient failure; it doubles per failed attempt, up to the cap. */
export const RETRY_BASE_MS = 500;
export const RETRY_CAP_MS = 30_000;

/**
 * One derivation: a model stage (the consent read and the sub-agent calls), then a database
 * stage that writes what it derived. Each stage is retried on its own, so a database blip never
 * calls the model again. `write` may be called again after a failure: it must resume, not repeat.
 */
export interface Derivation<R = unknown> {
  kind: JobKind;
  seniorId: string;
  /** 'skipped' (no consent) ends the job with nothing to write. */
  derive(): Promise<R | 'skipped'>;
  write(result: R): Promise<void>;
}

/** The turns a group of jobs keeps in RAM (a session's): released when its last job ends. */
interface Hold {
  transcripts: number;
  bytes: number;
  jobs: number;
}

interface Entry {
  job: Derivation;
  holdKey: string;
  stage: 'derive' | 'write';
  /** Failed attempts of the current stage. */
  failures: number;
  result?: unknown;
  /** The senior was erased, or the shutdown gave up: whatever it derived is never written. */
  cancelled: boolean;
  timer?: NodeJS.Timeout;
}

export interface PoolOptions {
  concurrency: number;
  /** Tries per stage (the first included) before a transient failure counts as final. */
  maxAttempts: number;
  /** Bound on the turns held by pending jobs: a job that would hold more is dropped (memory_bound). */
  maxTranscripts: number;
  maxHeldBytes: number;
  gate: ProviderGate;
  metrics: Metrics;
  logger: Logger;
  /** Jitter source (tests may pin it). */
  random?: () => number;
}

export interface PoolStats {
  /** Waiting to start, or backing off before a retry. */
  queued: number;
  inFlight: number;
  transcripts: number;
  bytes: number;
}

/** Full back-off for the `failures`-th failure: exponential, half of it jittered, at least what the provider asked for. */
export function backoffMs(failures: number, retryAfterMs: number | null, random: () => number = Math.random): number {
  const ceiling = Math.min(RETRY_CAP_MS, RETRY_BASE_MS * 2 ** (failures - 1));
  return Math.max(retryAfterMs ?? 0, Math.round(ceiling / 2 + (random() * ceiling) / 2));
}

/**
 * The in-process pool that runs every derivation off the hot path. What it holds is the
 * transcript, so it lives in RAM only — no job table, file or log ever sees a job's input — and
 * is bounded three ways: jobs run `concurrency` at a time; no call leaves while the provider's
 * Retry-After lasts (the gate); and the turns held by pending jobs never pass `maxTranscripts` /
 * `maxHeldBytes` — a job that would pass them is dropped on arrival and counted (tail drop: the
 * jobs already held are older, closer to their turn and may be half done).
 */
export class DerivationPool {
  private readonly ready: Entry[] = [];
  private readonly delayed = new Set<Entry>();
  private readonly running = new Set<Entry>();
  private readonly holds = new Map<string, Hold>();
  private transcripts = 0;
  private bytes = 0;
  private concurrency: number;
  private pumpTimer: NodeJS.Timeout | null = null;
  private idleWaiters: Array<() => void> = [];
  /** Set once a shutdown gave up on the jobs left: their failures (database closing) are expected. */
  private abandoned = false;
  private readonly random: () => number;
  /** The most turns (and bytes) held at once since start: for benchmarks. */
  peak = { transcripts: 0, bytes: 0 };

  private readonly options: PoolOptions;

  constructor(options: PoolOptions) {
    this.options = options;
    this.concurrency = options.concurrency;
    this.random = options.random ?? Math.random;
  }

  get pending(): number {
    return this.ready.length + this.delayed.size + this.running.size;
  }

  stats(): PoolStats {
    return { queued: this.ready.length + this.delayed.size, inFlight: this.running.size, transcripts: this.transcripts, bytes: this.bytes };
  }

  /**
   * Queues `jobs`, which together hold `transcripts` turns of `bytes` under `holdKey` (a session:
   * its jobs share its turns, so a later job that holds more turns adds only the difference).
   * Returns false when the bound refused them: each is counted as dropped (memory_bound).
   */
  submit(holdKey: string, held: { transcripts: number; bytes: number }, jobs: Derivation[]): boolean {
    if (jobs.length === 0 || this.abandoned) return false;
    const hold = this.holds.get(holdKey);
    const addTranscripts = Math.max(0, held.transcripts - (hold?.transcripts ?? 0));
    const addBytes = Math.max(0, held.bytes - (hold?.bytes ?? 0));
    if (this.transcripts + addTranscripts > this.options.maxTranscripts || this.bytes + addBytes > this.options.maxHeldBytes) {
      for (const job of jobs) this.options.metrics.closeJobsDropped.inc({ kind: job.kind, reason: 'memory_bound' });
      return false;
    }
    const kept = hold ?? { transcripts: 0, bytes: 0, jobs: 0 };
    kept.transcripts += addTranscripts;
    kept.bytes += addBytes;
    kept.jobs += jobs.length;
    this.holds.set(holdKey, kept);
    this.transcripts += addTranscripts;
    this.bytes += addBytes;
    this.peak = { transcripts: Math.max(this.peak.transcripts, this.transcripts), bytes: Math.max(this.peak.bytes, this.bytes) };
    for (const job of jobs) this.ready.push({ job, holdKey, stage: 'derive', failures: 0, cancelled: false });
    this.pump();
    return true;
  }

  /**
   * Erasure: the senior's queued and backing-off jobs are dropped, the running ones write nothing
   * when they finish. Returns how many jobs were dropped or cancelled (counted: erased).
   */
  invalidateSenior(seniorId: string): number {
    let n = 0;
    for (let i = this.ready.length - 1; i >= 0; i--) {
      const entry = this.ready[i]!;
      if (entry.job.seniorId !== seniorId) continue;
      this.ready.splice(i, 1);
      this.drop(entry, 'erased');
      n += 1;
    }
    for (const entry of [...this.delayed]) {
      if (entry.job.seniorId !== seniorId) continue;
      clearTimeout(entry.timer);
      this.delayed.delete(entry);
      this.drop(entry, 'erased');
      n += 1;
    }
    for (const entry of this.running) {
      if (entry.job.seniorId === seniorId && !entry.cancelled) {
        entry.cancelled = true;
        n += 1;
      }
    }
    this.settled();
    return n;
  }

  /** Waits until no job is queued, backing off or running, at most `timeoutMs`; false if some were left. */
  async drain(timeoutMs: number): Promise<boolean> {
    if (this.pending === 0) return true;
    let timer: NodeJS.Timeout | undefined;
    let waiter!: () => void;
    const idle = new Promise<true>((resolve) => this.idleWaiters.push((waiter = () => resolve(true))));
    const timeout = new Promise<false>((resolve) => (timer = setTimeout(() => resolve(false), timeoutMs)));
    const drained = await Promise.race([idle, timeout]);
    clearTimeout(timer);
    this.idleWaiters = this.idleWaiters.filter((w) => w !== waiter);
    return drained;
  }

  /**
   * SIGTERM: the pool runs at `concurrency` (sub-agent calls wait on the network, not on this
   * process) for at most `budgetMs`. Whatever has not finished then is given up — queued jobs
   * never start, running ones write nothing — counted in `kohami_close_jobs_lost_total` and
   * logged as counts, by kind, never as text. Returns how many.
   */
  async shutdown(budgetMs: number, concurrency: number): Promise<number> {
    this.concurrency = Math.max(this.concurrency, concurrency);
    this.pump();
    if (await this.drain(budgetMs)) return 0;
    const left = [...this.ready, ...this.delayed, ...this.running];
    const byKind: Record<JobKind, number> = { mood: 0, extraction: 0, segment: 0 };
    for (const entry of left) byKind[entry.job.kind] += 1;
    const { transcripts } = this;
    const backingOff = this.delayed.size;
    this.abandoned = true;
    for (const entry of this.delayed) clearTimeout(entry.timer);
    for (const entry of this.running) entry.cancelled = true;
    this.ready.length = 0;
    this.delayed.clear();
    this.holds.clear();
    this.transcripts = 0;
    this.bytes = 0;
    if (this.pumpTimer) clearTimeout(this.pumpTimer);
    this.options.metrics.closeJobsLost.inc(left.length);
    this.options.logger.warn(
      { lost: left.length, ...byKind, backingOff, transcripts, budgetMs },
      'derivation jobs unfinished when the shutdown budget ran out: their derivations are lost',
    );
    return left.length;
  }

  private pump(): void {
    while (!this.abandoned && this.running.size < this.concurrency && this.ready.length > 0) {
      // No model call leaves while the provider's Retry-After lasts; jobs wait their turn here, not in a call.
      const pause = this.options.gate.pauseMs;
      if (pause > 0 && this.ready[0]!.stage === 'derive') {
        if (!this.pumpTimer) this.pumpTimer = setTimeout(() => ((this.pumpTimer = null), this.pump()), pause);
        return;
      }
      const entry = this.ready.shift()!;
      this.running.add(entry);
      void this.step(entry).finally(() => {
        this.running.delete(entry);
        this.pump();
        this.settled();
      });
    }
  }

  private async step(entry: Entry): Promise<void> {
    const { job } = entry;
    // Jobs share the event loop with live sessions: each step lets pending kiosk I/O run first.
    await yieldToIo();
    if (entry.cancelled) return this.drop(entry, 'erased');
    const stop = this.options.metrics.closeJobDuration.startTimer({ kind: job.kind });
    try {
      if (entry.stage === 'derive') {
        const tracked = await this.options.gate.track(() => job.derive());
        const transient = tracked.transient;
        if ('error' in tracked) {
          const cause = isTransientDatabaseError(tracked.error) ? 'database' : transient || isTransientModelError(tracked.error) ? 'model' : null;
          return this.failed(entry, tracked.error, cause, transient?.retryAfterMs ?? null);
        }
        // A sub-agent that swallowed a transient failure (a null summary, no facts): try the stage again while attempts last, else keep its fallback.
        if (transient && this.retry(entry, 'model', transient.retryAfterMs)) return;
        if (tracked.value === 'skipped') return this.finish(entry, 'skipped');
        entry.result = tracked.value;
        entry.stage = 'write';
        entry.failures = 0;
        await yieldToIo();
      }
      if (entry.cancelled) return this.drop(entry, 'erased');
      try {
        await job.write(entry.result);
      } catch (err) {
        return this.failed(entry, err, isTransientDatabaseError(err) ? 'database' : isTransientModelError(err) ? 'model' : null, null);
      }
      this.finish(entry, 'ok');
    } finally {
      stop();
    }
  }

  /** A stage threw: tried again later if the failure is transient and attempts are left, else the job ends in error. */
  private failed(entry: Entry, err: unknown, cause: 'model' | 'database' | null, retryAfterMs: number | null): void {
    if (entry.cancelled) return this.drop(entry, 'erased');
    if (cause && this.retry(entry, cause, retryAfterMs)) return;
    if (!this.abandoned) this.options.logger.warn({ err, seniorId: entry.job.seniorId, kind: entry.job.kind, stage: entry.stage, attempts: entry.failures + 1 }, 'derivation job failed');
    this.finish(entry, 'error');
  }

  /** Schedules the entry's stage again after its back-off; false when its attempts are spent. */
  private retry(entry: Entry, cause: 'model' | 'database', retryAfterMs: number | null): boolean {
    entry.failures += 1;
    if (entry.failures >= this.options.maxAttempts || this.abandoned) return false;
    this.options.metrics.closeJobsRetried.inc({ kind: entry.job.kind, cause });
    this.delayed.add(entry);
    entry.timer = setTimeout(() => {
      this.delayed.delete(entry);
      entry.timer = undefined;
      this.ready.push(entry);
      this.pump();
    }, backoffMs(entry.failures, retryAfterMs, this.random));
    return true;
  }

  // A job the shutdown gave up on is already counted as lost: what it does after is not counted again.
  private finish(entry: Entry, outcome: 'ok' | 'skipped' | 'error'): void {
    if (!this.abandoned) this.options.metrics.closeJobs.inc({ kind: entry.job.kind, outcome });
    this.release(entry);
  }

  private drop(entry: Entry, reason: DropReason): void {
    if (!this.abandoned) this.options.metrics.closeJobsDropped.inc({ kind: entry.job.kind, reason });
    this.release(entry);
  }

  private release(entry: Entry): void {
    const hold = this.holds.get(entry.holdKey);
    if (!hold) return;
    hold.jobs -= 1;
    if (hold.jobs > 0) return;
    this.holds.delete(entry.holdKey);
    this.transcripts -= hold.transcripts;
    this.bytes -= hold.bytes;
  }

  private settled(): void {
    if (this.pending > 0) return;
    for (const waiter of this.idleWaiters.splice(0)) waiter();
  }
}
