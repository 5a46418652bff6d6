import type { FastifyPluginAsync } from 'fastify';
import type { ZodTypeProvider } from 'fastify-type-provider-zod';
import { z } from 'zod';
import type { SeniorDirectory } from '../../../adapters/postgres/senior-directory.ts';
import { generateToken } from '../../../adapters/postgres/tokens.ts';
import { requireRoleOnRoutes } from '../api-auth.ts';

export interface CaregiverRoutesOptions {
  directory: SeniorDirectory;
}

const CaregiverParams = z.object({ id: z.uuid({ message: 'caregiver id must be a UUID' }) });
const LinkParams = CaregiverParams.extend({ seniorId: z.uuid({ message: 'senior id must be a UUID' }) });
const CaregiverBody = z.object(
  { label: z.string({ message: 'label must be a string' }).trim().min(1, 'label must not be empty').max(200, 'label must be at most 200 characters') },
  { message: 'expected a JSON object with a label, e.g. {"label": "Claire (fille)"}' },
);
const IssuedToken = z.object({ id: z.string(), token: z.string() });
const Link = z.object({ caregiverId: z.string(), seniorId: z.string(), linked: z.boolean() });
const ErrorBody = z.object({ error: z.string(), message: z.string() });

const noCaregiver = { error: 'not_found', message: 'no such caregiver' };

/**
 * The back office's caregivers: a caregiver is an API token row of role caregiver, whose id stays its
 * identity through token rotations and revocations, so its links to seniors (INV-P05) stay with it.
 * A token is answered once, when issued, and stored hashed. Role `admin` only.
 */
export const caregiverRoutes: FastifyPluginAsync<CaregiverRoutesOptions> = async (app, { directory }) => {
  const r = app.withTypeProvider<ZodTypeProvider>();
  requireRoleOnRoutes(r, directory, 'admin');

  r.post('/v1/admin/caregivers', { schema: { body: CaregiverBody, response: { 201: IssuedToken.extend({ label: z.string() }) } } }, async (req, reply) => {
    const token = generateToken('caregiver');
    const id = await directory.addApiToken('caregiver', token, req.body.label);
    return reply.code(201).send({ id, label: req.body.label, token });
  });

  r.get(
    '/v1/admin/caregivers',
    {
      schema: {
        response: { 200: z.object({ data: z.array(z.object({ id: z.string(), label: z.string(), createdAt: z.string(), tokenActive: z.boolean(), seniorIds: z.array(z.string()) })) }) },
      },
    },
    async () => ({ data: await directory.caregivers() }),
  );

  r.post('/v1/admin/caregivers/:id/token', { schema: { params: CaregiverParams, response: { 201: IssuedToken, 404: ErrorBody } } }, async (req, reply) => {
    const token = generateToken('caregiver');
    if (!(await directory.replaceApiToken(req.params.id, 'caregiver', token))) return reply.code(404).send(noCaregiver);
    return reply.code(201).send({ id: req.params.id, token });
  });

  r.delete(
    '/v1/admin/caregivers/:id/token',
    { schema: { params: CaregiverParams, response: { 200: z.object({ id: z.string(), tokenActive: z.literal(false) }), 404: ErrorBody } } },
    async (req, reply) => {
      if (!(await directory.revokeApiToken(req.params.id, 'caregiver'))) return reply.code(404).send(noCaregiver);
      return { id: req.params.id, tokenActive: false as const };
    },
  );

  r.put('/v1/admin/caregivers/:id/seniors/:seniorId', { schema: { params: LinkParams, response: { 200: Link, 404: ErrorBody } } }, async (req, reply) => {
    const { id, seniorId } = req.params;
    const found = await directory.linkCaregiver(id, seniorId);
    if (!found.caregiver) return reply.code(404).send(noCaregiver);
    if (!found.senior) return reply.code(404).send({ error: 'not_found', message: 'no such senior' });
    return { caregiverId: id, seniorId, linked: true };
  });

  r.delete('/v1/admin/caregivers/:id/seniors/:seniorId', { schema: { params: LinkParams, response: { 200: Link, 404: ErrorBody } } }, async (req, reply) => {
    const { id, seniorId } = req.params;
    if (!(await directory.unlinkCaregiver(id, seniorId))) {
      const message = (await directory.roleOfToken(id)) !== 'caregiver' ? 'no such caregiver' : (await directory.exists(seniorId)) ? 'this caregiver is not linked to that senior' : 'no such senior';
      return reply.code(404).send({ error: 'not_found', message });
    }
    return { caregiverId: id, seniorId, linked: false };
  });
};
