import type { PgBoss } from 'pg-boss';
import type { Logger } from 'pino';
import type { PgErasurePurgeRepository } from '../../adapters/postgres/pg-erasure-purge.repository.ts';

export const PURGE_QUEUE = 'kohami-erasure-purge';
/** A purge job held by a process that died is taken back after this: far above a purge's duration (VACUUM FULL of the senior tables). */
const PURGE_EXPIRE_S = 1800;

/**
 * The purge after erasures (PgErasurePurgeRepository), as a pg-boss job with no payload: each erasure
 * asks for one to run `delaySeconds` later. The queue is `stately` (one job waiting, one running),
 * so erasures in the meantime share the waiting job, which purges them all — every erasure's bytes
 * are gone within `delaySeconds` + pg-boss's polling (2 s) + two purges (one already running, then theirs) of its answer, whichever process
 * runs the job; one asked for while a purge runs gets the next. Durable: a job whose process died is
 * run by another process, or by this one after its restart (it expires after PURGE_EXPIRE_S).
 */
export class ErasurePurge {
  private readonly boss: PgBoss;
  private readonly store: Pick<PgErasurePurgeRepository, 'purge'>;
  private readonly delaySeconds: number;
  private readonly logger: Pick<Logger, 'warn' | 'info'>;

  constructor(boss: PgBoss, store: Pick<PgErasurePurgeRepository, 'purge'>, delaySeconds: number, logger: Pick<Logger, 'warn' | 'info'>) {
    this.boss = boss;
    this.store = store;
    this.delaySeconds = delaySeconds;
    this.logger = logger;
  }

  /** After the scheduler's boss has started: the queue, and this process as one of its workers. */
  async start(): Promise<void> {
    if (!(await this.boss.getQueue(PURGE_QUEUE))) {
      await this.boss.createQueue(PURGE_QUEUE, { policy: 'stately', retryLimit: 3, retryDelay: 30, retryBackoff: true, expireInSeconds: PURGE_EXPIRE_S });
    }
    await this.boss.work(PURGE_QUEUE, async () => {
      const began = performance.now();
      const report = await this.store.purge();
      const ms = Math.round(performance.now() - began);
      if (report.wal === 'not_permitted') this.logger.warn({ ...report, ms }, 'erasure purge: tables rewritten; this database user may not switch the WAL or CHECKPOINT: the operator must (docs/operations.md)');
      else this.logger.info({ ...report, ms }, 'erasure purge done');
    });
  }

  /** An erasure's rows are deleted: their bytes go at the next purge. A job already waiting covers it (`stately`). */
  async request(): Promise<void> {
    await this.boss.send(PURGE_QUEUE, {}, { startAfter: this.delaySeconds });
  }
}
