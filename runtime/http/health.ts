import type { FastifyPluginAsync } from 'fastify';
import type pg from 'pg';
import { isMigrated } from '../../adapters/postgres/migrations.ts';

/**
 * `/health`: the process answers and nothing in it is broken for good — the liveness probe. Once the
 * embedded database's thread is dead it answers 503 with the reason: every query fails until the
 * process restarts, so the orchestrator's probe restarts it (SIGTERM: the live sessions drain first).
 * A database server that is down is not such a failure (it may come back): that is `/ready`'s.
 * `/ready`: the database answers, it is fully migrated, and the process is not shutting down — a
 * load balancer stops sending kiosks here the moment SIGTERM lands. Ready, it names the region of
 * the Mistral host in use (`offline` without a key), so a probe can tell where the seniors' words go.
 */
export const healthRoutes: FastifyPluginAsync<{ pool: pg.Pool; accepting: () => boolean; failure: () => string | null; mistralRegion: string }> = async (
  app,
  { pool, accepting, failure, mistralRegion },
) => {
  app.get('/health', async (_request, reply) => {
    const reason = failure();
    if (reason) return reply.code(503).send({ status: 'failing', reason });
    return { status: 'ok' };
  });
  app.get('/ready', async (_request, reply) => {
    if (!accepting()) return reply.code(503).send({ status: 'not_ready', reason: 'shutting down' });
    try {
      if (await isMigrated(pool)) return { status: 'ready', mistralRegion };
      return reply.code(503).send({ status: 'not_ready', reason: 'migrations pending' });
    } catch {
      return reply.code(503).send({ status: 'not_ready', reason: 'database unreachable' });
    }
  });
};
