import type { FastifyPluginAsync } from 'fastify';
import type pg from 'pg';
import { isMigrated } from './migrate.ts';

/** `/health`: the process answers. `/ready`: the database answers and is fully migrated. */
export const healthRoutes: FastifyPluginAsync<{ pool: pg.Pool }> = async (app, { pool }) => {
  app.get('/health', async () => ({ status: 'ok' }));
  app.get('/ready', async (_request, reply) => {
    try {
      if (await isMigrated(pool)) return { status: 'ready' };
      return reply.code(503).send({ status: 'not_ready', reason: 'migrations pending' });
    } catch {
      return reply.code(503).send({ status: 'not_ready', reason: 'database unreachable' });
    }
  });
};
