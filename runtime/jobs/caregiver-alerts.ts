import type { PgBoss } from 'pg-boss';
import type { Logger } from 'pino';
import type { PgCaregiverAlertsRepository, RecordedAlert } from '../../adapters/postgres/pg-caregiver-alerts.repository.ts';
import type { PgMoodScoresRepository } from '../../adapters/postgres/pg-mood-scores.repository.ts';
import { postSigned } from '../../adapters/webhook/signed-webhook.ts';
import { parisDay } from '../../machines/memory/dream.ts';
import {
  ALERT_WINDOW_DAYS,
  evaluationStart,
  keepRecordedStarts,
  moodEpisodes,
  recentAlerts,
  shiftDay,
  type MoodAlert,
  type MoodAlertSettings,
} from '../../machines/memory/mood-alerts.ts';
import { DREAM_TIMEZONE } from './dream-scheduler.ts';
import { declareQueue } from './pg-boss-queues.ts';

export const EVALUATE_QUEUE = 'kohami-caregiver-alerts-evaluate';
export const SWEEP_QUEUE = 'kohami-caregiver-alerts-sweep';
export const DELIVER_QUEUE = 'kohami-caregiver-alerts-deliver';
/** Every morning, Europe/Paris: the seniors active in the last week are evaluated again (one lost with its process is made up). */
export const SWEEP_CRON = '0 7 * * *';
/** A webhook is tried this many times after its first failure (pg-boss backs off from CAREGIVER_ALERT_RETRY_DELAY_S), then given up. */
export const DELIVERY_RETRY_LIMIT = 5;
/** No back-off between two tries passes this. */
export const DELIVERY_RETRY_DELAY_MAX_S = 3600;
/** One webhook request, its answer's status included. */
export const WEBHOOK_TIMEOUT_MS = 10_000;
/**
 * How often each process looks for the alerts' jobs (pg-boss's polling). A job this process queues wakes
 * its own worker at once; one queued by another process, or a retry come due, waits up to this.
 */
export const ALERT_JOBS_POLL_S = 2;
/** A job whose process died is taken back after this: far above one evaluation or one request. */
const JOB_EXPIRE_S = 120;

export interface AlertWebhook {
  url: string;
  secret: string;
  retryDelaySeconds: number;
}

export interface CaregiverAlertsDeps {
  /** The runtime's pg-boss (DreamScheduler's), started. */
  boss: PgBoss;
  store: PgCaregiverAlertsRepository;
  moodScores: Pick<PgMoodScoresRepository, 'timeline'>;
  /** The seniors with a mood capture or a segment in the last 7 days. */
  activeSeniors: () => Promise<string[]>;
  settings: MoodAlertSettings;
  /** Null: episodes are recorded and shown, nothing is posted. */
  webhook: AlertWebhook | null;
  logger: Pick<Logger, 'debug' | 'info' | 'warn'>;
}

interface Delivery {
  seniorId: string;
  alertId: string;
}

/**
 * The caregivers' mood alerts: what the API shows (`shown`, computed from the mood timeline at each
 * read) and, on pg-boss, the episodes recorded and posted once each. A senior is evaluated after
 * each mood capture is written (`request`: one waiting job per senior) and every morning; an
 * evaluation records the episodes in the alert window, and each new one's webhook is queued as its
 * own job (the episode's id is the job's, so it is queued once). Jobs carry ids only.
 */
export class CaregiverAlerts {
  private readonly deps: CaregiverAlertsDeps;
  /** This process's pg-boss workers of the two queues it sends to, once started. */
  private workers: { evaluate: string; deliver: string } | null = null;

  constructor(deps: CaregiverAlertsDeps) {
    this.deps = deps;
  }

  private get enabled(): boolean {
    return this.deps.settings.streakDays > 0 || this.deps.settings.weeklyDrop > 0;
  }

  /** The queues, the morning sweep, and this process as one of their workers. */
  async start(): Promise<void> {
    const { boss, webhook } = this.deps;
    // `short`: one job waiting per senior (its singletonKey); captures meanwhile share it.
    await declareQueue(boss, EVALUATE_QUEUE, { policy: 'short', retryLimit: 3, retryDelay: 10, retryBackoff: true, expireInSeconds: JOB_EXPIRE_S });
    await declareQueue(boss, SWEEP_QUEUE, { expireInSeconds: JOB_EXPIRE_S });
    await declareQueue(boss, DELIVER_QUEUE, {
      retryLimit: DELIVERY_RETRY_LIMIT,
      retryDelay: webhook?.retryDelaySeconds ?? 0,
      retryBackoff: true,
      retryDelayMax: DELIVERY_RETRY_DELAY_MAX_S,
      expireInSeconds: JOB_EXPIRE_S,
    });
    await boss.schedule(SWEEP_QUEUE, SWEEP_CRON, {}, { tz: DREAM_TIMEZONE });
    const polling = { pollingIntervalSeconds: ALERT_JOBS_POLL_S };
    await boss.work(SWEEP_QUEUE, polling, async () => {
      for (const seniorId of await this.deps.activeSeniors()) await this.request(seniorId);
    });
    const evaluate = await boss.work<{ seniorId: string }>(EVALUATE_QUEUE, polling, async ([job]) => {
      await this.evaluate(job!.data.seniorId);
    });
    const deliver = await boss.work<Delivery>(DELIVER_QUEUE, polling, async ([job]) => {
      await this.deliver(job!.data, job!.retryCount);
    });
    this.workers = { evaluate, deliver };
  }

  /** Asks for an evaluation of the senior (after a mood capture): a job already waiting covers it. */
  async request(seniorId: string): Promise<void> {
    if (!this.enabled) return;
    await this.deps.boss.send(EVALUATE_QUEUE, { seniorId }, { singletonKey: seniorId });
    this.wake('evaluate');
  }

  /** This process's worker of the queue fetches now rather than at its next poll (pg-boss keeps polling). */
  private wake(queue: 'evaluate' | 'deliver'): void {
    if (this.workers) this.deps.boss.notifyWorker(this.workers[queue]);
  }

  /** The senior's episodes that reach into the last ALERT_WINDOW_DAYS days, the latest start first. */
  async shown(seniorId: string): Promise<MoodAlert[]> {
    const { store, moodScores, settings } = this.deps;
    const today = parisDay(new Date());
    const known = await store.known(seniorId, shiftDay(today, -(ALERT_WINDOW_DAYS - 1)));
    const since = evaluationStart(today, known);
    // A Paris day starts on the UTC day before at the earliest: read from there, the rule drops the rest.
    const days = await moodScores.timeline(seniorId, { from: new Date(`${shiftDay(since, -1)}T00:00:00Z`) });
    return recentAlerts(keepRecordedStarts(moodEpisodes(days, since, settings), known), today);
  }

  /** Records the senior's episodes, then queues the webhook of each not queued yet. */
  private async evaluate(seniorId: string): Promise<void> {
    const { store, boss, webhook } = this.deps;
    const episodes = await this.shown(seniorId);
    const added = await store.record(seniorId, episodes, webhook !== null);
    // Also those a process recorded and died before queueing: the job id makes a second queueing a no-op.
    for (const alertId of webhook ? await store.pendingDeliveries(seniorId) : []) {
      await boss.send(DELIVER_QUEUE, { seniorId, alertId } satisfies Delivery, { id: alertId });
      await store.markQueued(seniorId, alertId);
      this.wake('deliver');
    }
    this.deps.logger.debug({ seniorId, episodes: episodes.length, added: added.length }, 'caregiver alerts evaluated');
  }

  /** One try of an episode's webhook; a failure throws, and pg-boss tries again. Logs ids and statuses only. */
  private async deliver({ seniorId, alertId }: Delivery, attempt: number): Promise<void> {
    const { store, webhook, logger } = this.deps;
    const alert = await store.get(seniorId, alertId);
    if (!alert || !webhook) {
      logger.info({ alertId, seniorId, outcome: alert ? 'no_webhook' : 'erased' }, 'caregiver alert not posted');
      return;
    }
    let status: number;
    try {
      status = await postSigned({ url: webhook.url, secret: webhook.secret, timeoutMs: WEBHOOK_TIMEOUT_MS }, alert.id, alertPayload(alert));
    } catch (err) {
      // Never the error itself: its message may name the URL, whose path or query can hold a credential.
      // Nor as the job's output (pg-boss keeps the thrown error).
      const outcome = (err as Error).name === 'TimeoutError' ? 'timeout' : 'unreachable';
      logger.warn({ alertId, seniorId, attempt, outcome, final: attempt >= DELIVERY_RETRY_LIMIT }, 'caregiver alert webhook failed');
      throw new Error(`caregiver alert webhook ${outcome}`);
    }
    if (status < 200 || status > 299) {
      logger.warn({ alertId, seniorId, attempt, status, final: attempt >= DELIVERY_RETRY_LIMIT }, 'caregiver alert webhook failed');
      throw new Error(`caregiver alert webhook answered ${status}`);
    }
    logger.info({ alertId, seniorId, attempt, status }, 'caregiver alert posted');
  }
}

/** What a webhook posts: ids, days, numbers and the kind — never a text (docs/operations.md, « Caregiver alerts »). */
export function alertPayload(alert: RecordedAlert): object {
  const common = { id: alert.id, seniorId: alert.seniorId, kind: alert.kind, open: alert.open, from: alert.from, to: alert.to, days: alert.days };
  const numbers = alert.kind === 'tier_streak' ? { tier: alert.tier } : { previousAverage: alert.previousAverage, average: alert.average, drop: alert.drop };
  return { ...common, ...numbers, detectedAt: alert.detectedAt };
}
