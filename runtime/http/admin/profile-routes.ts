import type { FastifyPluginAsync } from 'fastify';
import type { ZodTypeProvider } from 'fastify-type-provider-zod';
import { z } from 'zod';
import { CompassSchema, InterlocutorSchema, type PgProfilesRepository } from '../../../adapters/postgres/pg-profiles.repository.ts';
import type { SeniorDirectory } from '../../../adapters/postgres/senior-directory.ts';
import { DEFAULT_PERSONA } from '../../../machines/session/prompt.ts';
import { pauseSummary } from '../../../machines/voice/pause-profile.ts';
import { requireRoleOnRoutes } from '../api-auth.ts';

export interface ProfileRoutesOptions {
  directory: SeniorDirectory;
  profiles: PgProfilesRepository;
  /** A persona changed (null: the deployment's): cached replies written under the old one go. */
  onPersonaChange: (seniorId: string | null) => void;
}

const SeniorParams = z.object({ id: z.uuid({ message: 'senior id must be a UUID' }) });
const PersonaBody = z.object({ persona: z.string().trim().min(1, 'persona must not be empty').max(4000) });
const PersonaView = z.object({ persona: z.string(), source: z.enum(['senior', 'deployment', 'built-in']) });
const ProfileBody = z.object({ interlocutor: InterlocutorSchema.optional(), compass: CompassSchema.optional() });
/** Voice mode's mid-sentence pauses, numbers only (read-only: derived, never written by an admin). */
const PausesView = z.object({ count: z.number().int(), p50Ms: z.number().int().nullable(), p90Ms: z.number().int().nullable() });
const ProfileView = z.object({ interlocutor: InterlocutorSchema, compass: CompassSchema, pauses: PausesView });
const ErrorBody = z.object({ error: z.string(), message: z.string() });
const notFound = { error: 'not_found', message: 'no such senior' };

/** The narrative and interlocutor memories, readable and correctable by admins. */
export const profileRoutes: FastifyPluginAsync<ProfileRoutesOptions> = async (app, { directory, profiles, onPersonaChange }) => {
  const r = app.withTypeProvider<ZodTypeProvider>();
  requireRoleOnRoutes(r, directory, 'admin');

  const profileView = async (seniorId: string) => {
    const { interlocutor, compass, pauses } = await profiles.profile(seniorId);
    return { interlocutor, compass, pauses: pauseSummary(pauses) };
  };
  const view = async (seniorId: string | null) => {
    const own = seniorId ? await profiles.persona(seniorId) : null;
    const deployment = await profiles.persona(null);
    if (seniorId && own !== null && own !== deployment) return { persona: own, source: 'senior' as const };
    return deployment !== null ? { persona: deployment, source: 'deployment' as const } : { persona: DEFAULT_PERSONA, source: 'built-in' as const };
  };

  r.get('/v1/admin/persona', { schema: { response: { 200: PersonaView } } }, async () => view(null));
  r.put('/v1/admin/persona', { schema: { body: PersonaBody, response: { 200: PersonaView } } }, async (req) => {
    await profiles.setPersona(null, req.body.persona);
    onPersonaChange(null);
    return view(null);
  });
  r.delete('/v1/admin/persona', { schema: { response: { 200: PersonaView } } }, async () => {
    await profiles.setPersona(null, null);
    onPersonaChange(null);
    return view(null);
  });

  r.get('/v1/admin/seniors/:id/persona', { schema: { params: SeniorParams, response: { 200: PersonaView, 404: ErrorBody } } }, async (req, reply) => {
    if (!(await directory.exists(req.params.id))) return reply.code(404).send(notFound);
    return view(req.params.id);
  });
  r.put('/v1/admin/seniors/:id/persona', { schema: { params: SeniorParams, body: PersonaBody, response: { 200: PersonaView, 404: ErrorBody } } }, async (req, reply) => {
    if (!(await directory.exists(req.params.id))) return reply.code(404).send(notFound);
    await profiles.setPersona(req.params.id, req.body.persona);
    onPersonaChange(req.params.id);
    return view(req.params.id);
  });
  r.delete('/v1/admin/seniors/:id/persona', { schema: { params: SeniorParams, response: { 200: PersonaView, 404: ErrorBody } } }, async (req, reply) => {
    if (!(await directory.exists(req.params.id))) return reply.code(404).send(notFound);
    await profiles.setPersona(req.params.id, null);
    onPersonaChange(req.params.id);
    return view(req.params.id);
  });

  r.get('/v1/admin/seniors/:id/profile', { schema: { params: SeniorParams, response: { 200: ProfileView, 404: ErrorBody } } }, async (req, reply) => {
    if (!(await directory.exists(req.params.id))) return reply.code(404).send(notFound);
    return profileView(req.params.id);
  });
  r.put('/v1/admin/seniors/:id/profile', { schema: { params: SeniorParams, body: ProfileBody, response: { 200: ProfileView, 404: ErrorBody } } }, async (req, reply) => {
    if (!(await directory.exists(req.params.id))) return reply.code(404).send(notFound);
    await profiles.save(req.params.id, {
      ...(req.body.interlocutor ? { interlocutor: req.body.interlocutor } : {}),
      ...(req.body.compass ? { compass: req.body.compass } : {}),
    });
    return profileView(req.params.id);
  });
};
