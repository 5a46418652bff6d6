import type { FastifyPluginAsync } from 'fastify';
import type { ZodTypeProvider } from 'fastify-type-provider-zod';
import type { Registry } from 'prom-client';
import { z } from 'zod';
import type { PgPresenceRepository } from '../../adapters/postgres/pg-presence.repository.ts';
import type { SeniorDirectory } from '../../adapters/postgres/senior-directory.ts';
import { sessionTimeline, sessionView } from '../../machines/session/session-view.ts';
import { FLUXES } from '../../machines/session/ports.ts';
import { SOS_REASONS } from '../../machines/session/session.types.ts';
import type { sessionMachine } from '../../machines/session/session.machine.ts';
import { requireRoleOnRoutes } from '../http/api-auth.ts';
import { refuseCrossOrigin } from '../http/origin.ts';
import type { SessionRegistry } from '../sessions/session-registry.ts';
import type { InspectionHub, OpsEvent } from './inspection-hub.ts';

export interface OpsRoutesOptions {
  directory: SeniorDirectory;
  registry: SessionRegistry;
  presence: PgPresenceRepository;
  inspection: InspectionHub;
  machine: typeof sessionMachine;
  metrics: Registry;
  processId: string;
  presenceStaleMs: number;
}

/** An operator socket with this much unsent data is too slow: it is dropped, never waited for. */
export const OPS_STREAM_MAX_BUFFER = 256 * 1024;
/** A dropped operator socket's close frame queues behind what its client has not read: one that has not taken it this long after is cut. */
export const OPS_CLOSE_GRACE_MS = 5000;
/** RFC 6455 "Try Again Later". */
export const OPS_STREAM_TOO_SLOW = 1013;

interface StateTree {
  key: string;
  type: string;
  states: StateTree[];
}
function stateTree(node: { key: string; type: string; states: Record<string, unknown> }): StateTree {
  return { key: node.key, type: node.type, states: Object.values(node.states).map((s) => stateTree(s as typeof node)) };
}

const SessionParams = z.object({ id: z.uuid({ message: 'session id must be a UUID' }) });
const ErrorBody = z.object({ error: z.string(), message: z.string() });
/** Names and durations (ms) only: what the voice pipeline is doing, and its latest turn's stage timings. */
const VoiceView = z.object({
  state: z.enum(['off', 'listening', 'user_speaking', 'thinking', 'speaking']),
  stages: z
    .object({ turnId: z.string(), endpointingMs: z.number().optional(), transcriptionMs: z.number().optional(), firstTokenMs: z.number().optional(), firstAudioMs: z.number().optional() })
    .nullable(),
});
const SessionRow = z.object({
  sessionId: z.string(),
  seniorId: z.string(),
  /** The name the senior was registered under; null once the senior is erased. */
  seniorName: z.string().nullable(),
  processId: z.string(),
  local: z.boolean(),
  state: z.string(),
  currentFlux: z.string().nullable(),
  turnCount: z.number(),
  lastLatencyMs: z.number().nullable(),
  lastFlux: z.string().nullable(),
  /** This process's sessions only: presence rows (other processes) carry no voice state. */
  voice: VoiceView.nullable(),
  connectedSince: z.string(),
  heartbeatAt: z.string(),
});
/** A local session's full redacted view, or a remote one's presence row: never text either way. */
const SessionDetail = z.looseObject({ sessionId: z.string(), seniorId: z.string(), processId: z.string(), local: z.boolean(), state: z.string() });

/** Ranks, times, fluxes, latencies, SOS reasons and barge-ins: the schema lets no other field out. */
const Timeline = z.object({
  sessionId: z.string(),
  processId: z.string(),
  local: z.literal(true),
  startedAt: z.number(),
  total: z.number(),
  turns: z.array(
    z.object({ n: z.number(), startedAt: z.number(), flux: z.enum(FLUXES), latencyMs: z.number(), interrupted: z.boolean(), sosReason: z.enum(SOS_REASONS).nullable() }),
  ),
  current: z.object({ startedAt: z.number(), flux: z.string().nullable() }).nullable(),
});
const RemoteTimeline = z.object({ sessionId: z.string(), processId: z.string(), local: z.literal(false) });

/** Operators watch state, never conversations: every payload here is a redacted view. Roles `operator` or `admin`. */
export const opsRoutes: FastifyPluginAsync<OpsRoutesOptions> = async (app, opts) => {
  const { registry, presence, processId } = opts;
  const r = app.withTypeProvider<ZodTypeProvider>();
  requireRoleOnRoutes(r, opts.directory, 'operator', 'admin');

  r.get('/metrics', { schema: { hide: true } }, async (_req, reply) => reply.type(opts.metrics.contentType).send(await opts.metrics.metrics()));

  r.get('/v1/ops/sessions', { schema: { response: { 200: z.object({ processId: z.string(), sessions: z.array(SessionRow) }) } } }, async () => {
    const local = new Map(registry.views().map((v) => [v.sessionId, v]));
    const rows = await presence.list(opts.presenceStaleMs);
    const names = await opts.directory.displayNames([...new Set(rows.map((row) => row.seniorId))]);
    const sessions = rows.map((row) => {
      const view = local.get(row.sessionId);
      local.delete(row.sessionId);
      const seniorName = names.get(row.seniorId) ?? null;
      return view
        ? { ...row, seniorName, state: view.state, currentFlux: view.currentFlux, turnCount: view.turnCount, lastLatencyMs: view.lastTurn?.latencyMs ?? null, lastFlux: view.lastTurn?.flux ?? null, voice: view.voice, local: true }
        : { ...row, seniorName, voice: null, local: false };
    });
    return { processId, sessions };
  });

  r.get('/v1/ops/sessions/:id', { schema: { params: SessionParams, response: { 200: SessionDetail, 404: ErrorBody } } }, async (req, reply) => {
    const live = registry.findSession(req.params.id);
    if (live) return { processId, local: true, connectedSince: new Date(live.connectedSince).toISOString(), ...sessionView(live.actor.getSnapshot()) };
    const row = (await presence.list(opts.presenceStaleMs)).find((p) => p.sessionId === req.params.id);
    if (row) return { ...row, local: false };
    return reply.code(404).send({ error: 'not_found', message: 'no live session with that id' });
  });

  // A turn's words never leave the session: the timeline is built field by field, and its schema strips anything else.
  r.get(
    '/v1/ops/sessions/:id/timeline',
    { schema: { params: SessionParams, response: { 200: z.union([Timeline, RemoteTimeline]), 404: ErrorBody } } },
    async (req, reply) => {
      const live = registry.findSession(req.params.id);
      if (live) return { processId, local: true as const, ...sessionTimeline(live.actor.getSnapshot()) };
      const row = (await presence.list(opts.presenceStaleMs)).find((p) => p.sessionId === req.params.id);
      if (row) return { sessionId: row.sessionId, processId: row.processId, local: false as const };
      return reply.code(404).send({ error: 'not_found', message: 'no live session with that id' });
    },
  );

  r.post(
    '/v1/ops/sessions/:id/close',
    {
      schema: {
        params: SessionParams,
        response: {
          200: z.object({ closed: z.literal(true), processId: z.string() }),
          202: z.object({ closed: z.literal(false), requested: z.literal(true), message: z.string() }),
          404: ErrorBody,
        },
      },
    },
    async (req, reply) => {
    const live = registry.findSession(req.params.id);
    if (live) {
      live.actor.send({ type: 'CLOSE', reason: 'operator' });
      return { closed: true as const, processId };
    }
    if (await presence.requestClose(req.params.id)) {
      return reply.code(202).send({ closed: false, requested: true, message: 'the session lives in another process; it closes at its next heartbeat' });
    }
    return reply.code(404).send({ error: 'not_found', message: 'no live session with that id' });
  },
  );

  r.get('/v1/ops/machine', async () => stateTree(opts.machine.root as unknown as { key: string; type: string; states: Record<string, unknown> }));

  // The console's browser cannot set headers on a WebSocket: this route alone takes `?token=`; and
  // only from a page of this host.
  r.get('/v1/ops/stream', { websocket: true, config: { tokenInQuery: true }, onRequest: refuseCrossOrigin }, (socket) => {
    const send = (event: OpsEvent | { type: 'hello'; processId: string; sessions: unknown[] }) => {
      if (socket.bufferedAmount > OPS_STREAM_MAX_BUFFER) {
        unsubscribe();
        socket.close(OPS_STREAM_TOO_SLOW, 'operator client too slow');
        setTimeout(() => socket.terminate(), OPS_CLOSE_GRACE_MS).unref();
        return;
      }
      socket.send(JSON.stringify(event));
    };
    if (socket.readyState !== socket.OPEN) return;
    const unsubscribe = opts.inspection.subscribe(send);
    socket.on('close', unsubscribe);
    send({ type: 'hello', processId, sessions: registry.views() });
  });
};
