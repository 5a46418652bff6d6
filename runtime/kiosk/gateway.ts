import type { FastifyInstance, FastifyPluginAsync } from 'fastify';
import type { WebSocket } from 'ws';
import { bearerToken } from '../http/bearer.ts';
import { CROSS_ORIGIN_REFUSAL, isCrossOrigin } from '../http/origin.ts';
import type { LiveSession, SessionRegistry } from '../sessions/session-registry.ts';
import type { VoiceSessionFactory } from '../voice/voice-session.types.ts';
import { KioskConnection, type KioskConnectionContext } from './connection.ts';
import { RecentTurnIds } from './recent-turn-ids.ts';
import { SeniorLimits, type SeniorLimitSettings } from './senior-limits.ts';

export interface KioskGatewayOptions {
  registry: SessionRegistry;
  seniorForToken: (token: string) => Promise<string | null>;
  heartbeatMs: number;
  /** Frames per second per socket, and the burst allowed above it. */
  rateLimit?: { perSecond: number; burst: number };
  /** Voice mode; without it, `session.start {mode: "voice"}` is refused with `speech_unavailable`. */
  voice?: VoiceSessionFactory;
  /** Per-senior bounds on sockets and starts (KIOSK_SOCKETS_PER_SENIOR, KIOSK_STARTS_BURST, KIOSK_STARTS_PER_MINUTE). */
  seniorLimits?: SeniorLimitSettings;
}

/** Defaults of the per-senior bounds (the configuration's). */
export const DEFAULT_SENIOR_LIMITS: SeniorLimitSettings = { socketsPerSenior: 32, startsBurst: 20, startsPerMinute: 60 };

/**
 * Token lookups in flight shared by the upgrades presenting the same token at once (a kiosk opening
 * many sockets costs one query per round, not one per socket); past this many distinct tokens in
 * flight, a lookup is not shared.
 */
const MAX_SHARED_LOOKUPS = 10_000;

declare module 'fastify' {
  interface FastifyRequest {
    kioskSeniorId?: string;
  }
}

/** The kiosk WebSocket `/v1/kiosk` (protocol in docs/protocol.md). Needs @fastify/websocket registered on the app. */
export const kioskGateway: FastifyPluginAsync<KioskGatewayOptions> = async (app: FastifyInstance, opts) => {
  const alive = new WeakMap<WebSocket, boolean>();
  const limits = new SeniorLimits(opts.seniorLimits ?? DEFAULT_SENIOR_LIMITS);
  let refusalLoggedAt = -Infinity;
  const lookups = new Map<string, Promise<string | null>>();
  const seniorFor = (token: string): Promise<string | null> => {
    const shared = lookups.get(token);
    if (shared) return shared;
    const lookup = opts.seniorForToken(token);
    if (lookups.size >= MAX_SHARED_LOOKUPS) return lookup;
    lookups.set(token, lookup);
    const forget = () => lookups.delete(token);
    lookup.then(forget, forget);
    return lookup;
  };
  const seenTurns = new WeakMap<LiveSession, RecentTurnIds>();
  const context: KioskConnectionContext = {
    registry: opts.registry,
    rateLimit: opts.rateLimit ?? { perSecond: 20, burst: 40 },
    voice: opts.voice,
    limits,
    seenTurnsOf: (session) => {
      let seen = seenTurns.get(session);
      if (!seen) seenTurns.set(session, (seen = new RecentTurnIds()));
      return seen;
    },
  };
  const heartbeat = setInterval(() => {
    limits.sweep();
    for (const socket of app.websocketServer.clients) {
      if (alive.get(socket) === false) {
        socket.terminate();
        continue;
      }
      alive.set(socket, false);
      socket.ping();
    }
  }, opts.heartbeatMs);
  heartbeat.unref();
  app.addHook('onClose', async () => clearInterval(heartbeat));

  app.get(
    '/v1/kiosk',
    {
      websocket: true,
      // Before anything else of the request is looked at, as on every protected route. A cross-origin
      // browser page is refused before its token costs a query.
      onRequest: async (request, reply) => {
        if (isCrossOrigin(request)) return reply.code(403).send(CROSS_ORIGIN_REFUSAL);
        const token = bearerToken(request, { query: true });
        let seniorId: string | null;
        try {
          seniorId = token ? await seniorFor(token) : null;
        } catch (err) {
          // The database is unreachable: a kiosk should retry (or go elsewhere), not give up on a 500.
          request.log.warn({ err }, 'kiosk token lookup failed');
          return reply.code(503).header('retry-after', '2').send({ error: 'unavailable', message: 'the runtime cannot check kiosk tokens right now; retry' });
        }
        if (!seniorId) {
          return reply.code(401).send({ error: 'unauthorized', message: token ? 'unknown kiosk token' : 'missing kiosk token (Authorization: Bearer or ?token=)' });
        }
        // The client left during the lookup: nothing to reserve (its close has already happened).
        const raw = request.raw.socket;
        if (raw.destroyed) return reply.code(400).send({ error: 'gone', message: 'the connection closed during the upgrade' });
        const admission = limits.openSocket(seniorId);
        if (!admission.ok) {
          const message =
            admission.reason === 'too_many_sockets'
              ? `this senior already has ${limits.settings.socketsPerSenior} kiosk sockets open: close one, or retry`
              : 'this runtime tracks too many kiosks right now: retry';
          // Once a second at most: a flood of upgrades must not become a flood of log lines.
          const at = performance.now();
          if (at - refusalLoggedAt >= 1000) {
            refusalLoggedAt = at;
            request.log.warn({ seniorId, reason: admission.reason }, 'kiosk upgrade refused: too many sockets');
          }
          return reply.code(429).header('retry-after', '5').send({ error: 'too_many_sockets', message });
        }
        // Held by the connection itself: released once, when it closes, upgraded or not.
        raw.once('close', () => limits.closeSocket(seniorId));
        request.kioskSeniorId = seniorId;
      },
    },
    (socket, request) => {
      alive.set(socket, true);
      socket.on('pong', () => alive.set(socket, true));
      // The connection lives as long as the socket holds its listeners.
      new KioskConnection(socket, request.kioskSeniorId!, request.log, context);
    },
  );
};
