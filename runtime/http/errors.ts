import type { FastifyError, FastifyInstance, FastifyRequest } from 'fastify';
import { hasZodFastifySchemaValidationErrors, serializerCompiler, validatorCompiler } from 'fastify-type-provider-zod';
import pg from 'pg';
import { redactUrl } from '../logger.ts';
import { installJsonBody } from './body.ts';

/**
 * Routes validate with their zod schemas. A refused request gets 400 with a message naming
 * the parameter; an unexpected failure gets 500 with no internals (they are in the log).
 */
export function installHttpErrors(app: FastifyInstance): void {
  app.setValidatorCompiler(validatorCompiler);
  app.setSerializerCompiler(serializerCompiler);
  installJsonBody(app);
  // Fastify's own 404 logs and answers the raw URL: a mistyped kiosk link would put its ?token= in the log.
  app.setNotFoundHandler((request, reply) => {
    const route = `${request.method}:${redactUrl(request.url)}`;
    request.log.info({ route }, 'route not found');
    return reply.code(404).send({ error: 'not_found', message: `Route ${route} not found` });
  });
  app.setErrorHandler((err: FastifyError, request, reply) => {
    if (hasZodFastifySchemaValidationErrors(err)) {
      const message = err.validation.map((v) => `${v.instancePath.replace(/^\//, '').replace(/\//g, '.') || err.validationContext}: ${v.message}`).join('; ');
      return reply.code(400).send({ error: 'bad_request', message: `${err.validationContext} ${message}` });
    }
    if (err.statusCode && err.statusCode < 500) return reply.code(err.statusCode).send({ error: 'bad_request', message: err.message });
    if (isDataException(err)) {
      // The schemas should have caught it; this net keeps a value Postgres refuses a client error.
      // Neither the value nor the database's message (which may quote it) is logged.
      request.log.warn({ sqlstate: err.code, route: request.routeOptions.url }, 'the database refused a request value');
      return reply.code(400).send({ error: 'bad_request', message: `${requestParts(request)} holds a value the database cannot take (a NUL character, a date out of range or a malformed value)` });
    }
    request.log.error({ err }, 'request failed');
    return reply.code(500).send({ error: 'internal', message: 'internal error; see the runtime log' });
  });
}

/** SQLSTATE class 22, "data exception": the value was refused (22P05, 22021, 22008, 22007 …), not the server. */
function isDataException(err: Error): err is pg.DatabaseError & { code: string } {
  return err instanceof pg.DatabaseError && typeof err.code === 'string' && err.code.startsWith('22');
}

/** The parts of the request that carried input: the refused value is in one of them. */
function requestParts(request: FastifyRequest): string {
  const filled = (v: unknown) => typeof v === 'object' && v !== null && Object.keys(v).length > 0;
  const parts = [filled(request.params) && 'params', filled(request.query) && 'query', request.body !== undefined && 'body'].filter(Boolean);
  return parts.length > 0 ? `the request's ${parts.join(' or ')}` : 'the request';
}
