import type { PgBoss, Queue } from 'pg-boss';

/**
 * Creates `name` with `options`, or gives an existing queue (made by an earlier version or other
 * settings) the same retry and expiry options: its new jobs then run so. A queue's policy is set
 * once, at its creation.
 */
export async function declareQueue(boss: PgBoss, name: string, { policy, ...options }: Omit<Queue, 'name' | 'partition' | 'deadLetter' | 'heartbeatSeconds'>): Promise<void> {
  if (!(await boss.getQueue(name))) await boss.createQueue(name, { ...(policy ? { policy } : {}), ...options });
  else await boss.updateQueue(name, options);
}
