import { PgBoss } from 'pg-boss';
import type pg from 'pg';
import type { Logger } from 'pino';
import type { PgDreamRepository } from '../../adapters/postgres/pg-dream.repository.ts';
import { parisDay } from '../../machines/memory/dream.ts';
import type { Dream } from './dream.ts';
import { declareQueue } from './pg-boss-queues.ts';

export const NIGHTLY_QUEUE = 'kohami-dream-nightly';
export const SENIOR_QUEUE = 'kohami-dream';
export const NIGHTLY_CRON = '0 3 * * *';
export const DREAM_TIMEZONE = 'Europe/Paris';

/** How a consolidation job held by a process that died comes back (DREAM_JOB_* settings). */
export interface DreamJobTiming {
  /** An active job older than this is taken back (failed, then retried), whoever held it. */
  expireSeconds: number;
  /** The first retry's delay (pg-boss backs off from it: one to two times this, then doubling). */
  retryDelaySeconds: number;
  /** How often some process looks for expired jobs (pg-boss's supervision, one process at a time). */
  maintenanceSeconds: number;
}

/**
 * The nightly dream on pg-boss, over the runtime's own pool (so embedded PGlite works too):
 * at 03:00 Europe/Paris one job per senior active in the last 7 days, payloads carrying ids
 * only; a failed consolidation is retried by pg-boss; the dream itself is idempotent per day. A job
 * whose process was killed mid-run expires after `expireSeconds` and is retried by a live process
 * (pg-boss 12's worker heartbeat cannot be set on a queue that already exists, as every deployed
 * runtime's does: the expiry, which can, is the bound).
 */
export class DreamScheduler {
  readonly boss: PgBoss;

  private readonly store: PgDreamRepository;
  private readonly dream: Dream;
  private readonly logger: Pick<Logger, 'warn' | 'info'>;
  private readonly timing: DreamJobTiming;

  constructor(
    pool: pg.Pool,
    store: PgDreamRepository,
    dream: Dream,
    logger: Pick<Logger, 'warn' | 'info'>,
    timing: DreamJobTiming,
  ) {
    this.store = store;
    this.dream = dream;
    this.logger = logger;
    this.timing = timing;
    this.boss = new PgBoss({
      db: { executeSql: (text: string, values?: unknown[]) => pool.query(text, values) },
      // Expiry runs in the supervision pass, and per queue at most once per monitor interval.
      superviseIntervalSeconds: timing.maintenanceSeconds,
      monitorIntervalSeconds: timing.maintenanceSeconds,
    });
    this.boss.on('error', (err) => logger.warn({ err }, 'pg-boss error'));
  }

  /** `nightly: false` starts pg-boss alone (other jobs ride on it): no dream is scheduled or worked by this process. */
  async start({ nightly }: { nightly: boolean }): Promise<void> {
    await this.boss.start();
    if (!nightly) return;
    const { expireSeconds, retryDelaySeconds } = this.timing;
    await declareQueue(this.boss, NIGHTLY_QUEUE, { expireInSeconds: expireSeconds });
    await declareQueue(this.boss, SENIOR_QUEUE, { retryLimit: 3, retryDelay: retryDelaySeconds, retryBackoff: true, expireInSeconds: expireSeconds });
    await this.boss.schedule(NIGHTLY_QUEUE, NIGHTLY_CRON, {}, { tz: DREAM_TIMEZONE });
    await this.boss.work(NIGHTLY_QUEUE, async () => {
      await this.enqueueActiveSeniors();
    });
    await this.boss.work<{ seniorId: string }>(SENIOR_QUEUE, async ([job]) => {
      const report = await this.dream.consolidate(job!.data.seniorId, parisDay(new Date()));
      this.logger.info({ seniorId: report.seniorId, promoted: report.promoted.length, skipped: report.skipped }, 'dream done');
    });
  }

  /** One consolidation job per senior with a capture or a segment in the last 7 days. */
  async enqueueActiveSeniors(): Promise<string[]> {
    const seniors = await this.store.seniorsActiveInLastWeek();
    for (const seniorId of seniors) await this.boss.send(SENIOR_QUEUE, { seniorId });
    return seniors;
  }

  stop(): Promise<void> {
    return this.boss.stop({ graceful: true, timeout: 5000 });
  }
}
