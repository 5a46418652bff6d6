import { afterAll, describe, expect, it } from 'vitest';
import { startWirePostgres } from '../support/pglite-server.ts';
import { startTestRuntime, type TestRuntime } from '../support/runtime.ts';

const get = async (rt: TestRuntime, route: string) => {
  const res = await fetch(`${rt.url}${route}`);
  return { status: res.status, body: (await res.json()) as unknown };
};

describe('/health, the liveness probe, once the database can never answer again', () => {
  const runtimes: TestRuntime[] = [];
  const servers: Array<Awaited<ReturnType<typeof startWirePostgres>>> = [];
  afterAll(async () => {
    for (const rt of runtimes) await rt.close();
    for (const server of servers) await server.stop();
  });

  it('the embedded database thread dead: /health answers 503 naming it, so the orchestrator restarts the process; the process itself stays up', async () => {
    const rt = await startTestRuntime();
    runtimes.push(rt);
    expect(await get(rt, '/health')).toEqual({ status: 200, body: { status: 'ok' } });

    await rt.db.thread!.terminate();

    expect(await get(rt, '/health')).toEqual({ status: 503, body: { status: 'failing', reason: 'the embedded database thread is dead' } });
    expect(await get(rt, '/ready')).toEqual({ status: 503, body: { status: 'not_ready', reason: 'database unreachable' } });
    // The fatal line says it once; the process did not exit (this test runs in it) and still closes cleanly.
    await expect.poll(() => rt.logs.lines.filter((l) => l.includes('"level":60') && l.includes('ERR_DATABASE_THREAD_EXITED')).length).toBe(1);
  });

  it('a database server that goes away (DATABASE_URL) is readiness, not liveness: /ready 503, /health 200', async () => {
    const server = await startWirePostgres();
    const rt = await startTestRuntime({}, { DATABASE_URL: server.url });
    runtimes.push(rt);
    expect(await get(rt, '/ready')).toEqual({ status: 200, body: { status: 'ready', mistralRegion: 'offline' } });

    await server.stop();

    expect(await get(rt, '/ready')).toEqual({ status: 503, body: { status: 'not_ready', reason: 'database unreachable' } });
    expect(await get(rt, '/health')).toEqual({ status: 200, body: { status: 'ok' } });
  });
});
