import type { FastifyPluginAsync } from 'fastify';
import type pg from 'pg';
import { isMigrated } from '../../adapters/postgres/migrations.ts';

/**
 * `/health`: the process answers. `/ready`: the database answers, it is fully migrated, and the
 * process is not shutting down — a load balancer stops sending kiosks here the moment SIGTERM lands.
 */
export const healthRoutes: FastifyPluginAsync<{ pool: pg.Pool; accepting: () => boolean }> = async (app, { pool, accepting }) => {
  app.get('/health', async () => ({ status: 'ok' }));
  app.get('/ready', async (_request, reply) => {
    if (!accepting()) return reply.code(503).send({ status: 'not_ready', reason: 'shutting down' });
    try {
      if (await isMigrated(pool)) return { status: 'ready' };
      return reply.code(503).send({ status: 'not_ready', reason: 'migrations pending' });
    } catch {
      return reply.code(503).send({ status: 'not_ready', reason: 'database unreachable' });
    }
  });
};
