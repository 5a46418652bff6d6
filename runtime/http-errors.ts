import type { FastifyError, FastifyInstance } from 'fastify';
import { hasZodFastifySchemaValidationErrors, serializerCompiler, validatorCompiler } from 'fastify-type-provider-zod';

/**
 * Routes validate with their zod schemas. A refused request gets 400 with a message naming
 * the parameter; an unexpected failure gets 500 with no internals (they are in the log).
 */
export function installHttpErrors(app: FastifyInstance): void {
  app.setValidatorCompiler(validatorCompiler);
  app.setSerializerCompiler(serializerCompiler);
  app.setErrorHandler((err: FastifyError, request, reply) => {
    if (hasZodFastifySchemaValidationErrors(err)) {
      const message = err.validation.map((v) => `${v.instancePath.replace(/^\//, '').replace(/\//g, '.') || err.validationContext}: ${v.message}`).join('; ');
      return reply.code(400).send({ error: 'bad_request', message: `${err.validationContext} ${message}` });
    }
    if (err.statusCode && err.statusCode < 500) return reply.code(err.statusCode).send({ error: 'bad_request', message: err.message });
    request.log.error({ err }, 'request failed');
    return reply.code(500).send({ error: 'internal', message: 'internal error; see the runtime log' });
  });
}
