import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createLogger } from '../../runtime/logger.ts';
import { SWEEP_CRON, SWEEP_QUEUE } from '../../runtime/jobs/caregiver-alerts.ts';
import { NIGHTLY_CRON, NIGHTLY_QUEUE, SENIOR_QUEUE } from '../../runtime/jobs/dream-scheduler.ts';
import { PURGE_QUEUE } from '../../runtime/jobs/erasure-purge.ts';
import { startRuntime, type Runtime } from '../../runtime/runtime.ts';
import { testDatabaseImage } from '../support/database-image.ts';
import { LogCapture, startTestRuntime, testRuntimeConfig } from '../support/runtime.ts';

/**
 * The runtime's explicit options for what a test does not use: the nightly dream's scheduler and the
 * API docs. Left out of a test runtime unless its test asks; on in the runtime by default.
 */
async function docsStatus(rt: Runtime): Promise<number[]> {
  return Promise.all(['/docs/json', '/docs'].map(async (path) => (await fetch(`${rt.url}${path}`)).status));
}

describe('a test runtime', () => {
  let rt: Runtime;
  beforeAll(async () => {
    rt = await startTestRuntime();
  });
  afterAll(() => rt?.close());

  it('serves no API docs', async () => {
    expect(await docsStatus(rt)).toEqual([404, 404]);
    // The routes themselves are there, only their documents are not.
    expect((await fetch(`${rt.url}/health`)).status).toBe(200);
  });

  it('schedules and works no dream, while pg-boss still runs the erasure purge and the caregiver alerts', async () => {
    expect(await rt.dreams.boss.getSchedules()).toEqual([expect.objectContaining({ name: SWEEP_QUEUE, cron: SWEEP_CRON })]);
    expect(await rt.dreams.boss.getQueue(NIGHTLY_QUEUE)).toBeNull();
    expect(await rt.dreams.boss.getQueue(SENIOR_QUEUE)).toBeNull();
    expect(await rt.dreams.boss.getQueue(PURGE_QUEUE)).toEqual(expect.objectContaining({ name: PURGE_QUEUE }));
  });
});

describe('the runtime by default', () => {
  let rt: Runtime;
  beforeAll(async () => {
    // startRuntime itself, with no option but the test run's database image and a quiet log.
    rt = await startRuntime(testRuntimeConfig(), { logger: createLogger('debug', new LogCapture()), databaseImage: testDatabaseImage() });
  });
  afterAll(() => rt?.close());

  it('serves the OpenAPI document and Swagger UI', async () => {
    expect(await docsStatus(rt)).toEqual([200, 200]);
  });

  it('schedules the nightly dream and works its queues', async () => {
    const schedules = await rt.dreams.boss.getSchedules();
    expect(schedules).toHaveLength(2);
    expect(schedules).toEqual(expect.arrayContaining([expect.objectContaining({ name: NIGHTLY_QUEUE, cron: NIGHTLY_CRON })]));
    expect(await rt.dreams.boss.getQueue(SENIOR_QUEUE)).toEqual(expect.objectContaining({ name: SENIOR_QUEUE }));
  });
});
