import { PgBoss } from 'pg-boss';
import type pg from 'pg';
import type { Logger } from 'pino';
import type { PgDreamRepository } from '../../adapters/postgres/pg-dream.repository.ts';
import { parisDay } from '../../machines/memory/dream.ts';
import type { Dream } from './dream.ts';

export const NIGHTLY_QUEUE = 'kohami-dream-nightly';
export const SENIOR_QUEUE = 'kohami-dream';
export const NIGHTLY_CRON = '0 3 * * *';
export const DREAM_TIMEZONE = 'Europe/Paris';

/**
 * The nightly dream on pg-boss, over the runtime's own pool (so embedded PGlite works too):
 * at 03:00 Europe/Paris one job per senior active in the last 7 days, payloads carrying ids
 * only; a failed consolidation is retried by pg-boss; the dream itself is idempotent per day.
 */
export class DreamScheduler {
  readonly boss: PgBoss;

  private readonly store: PgDreamRepository;
  private readonly dream: Dream;
  private readonly logger: Pick<Logger, 'warn' | 'info'>;

  constructor(
    pool: pg.Pool,
    store: PgDreamRepository,
    dream: Dream,
    logger: Pick<Logger, 'warn' | 'info'>,
  ) {
    this.store = store;
    this.dream = dream;
    this.logger = logger;
    this.boss = new PgBoss({ db: { executeSql: (text: string, values?: unknown[]) => pool.query(text, values) } });
    this.boss.on('error', (err) => logger.warn({ err }, 'pg-boss error'));
  }

  async start(): Promise<void> {
    await this.boss.start();
    for (const [name, options] of [
      [NIGHTLY_QUEUE, {}],
      [SENIOR_QUEUE, { retryLimit: 3, retryDelay: 300, retryBackoff: true }],
    ] as const) {
      if (!(await this.boss.getQueue(name))) await this.boss.createQueue(name, options);
    }
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
