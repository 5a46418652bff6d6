import type { FastifyInstance, FastifyPluginAsync } from 'fastify';
import type { WebSocket } from 'ws';
import { bearerToken } from '../http/bearer.ts';
import type { LiveSession, SessionRegistry } from '../sessions/session-registry.ts';
import type { VoiceSessionFactory } from '../voice/voice-session.ts';
import { KioskConnection, type KioskConnectionContext } from './connection.ts';
import { RecentTurnIds } from './recent-turn-ids.ts';

export interface KioskGatewayOptions {
  registry: SessionRegistry;
  seniorForToken: (token: string) => Promise<string | null>;
  heartbeatMs: number;
  /** Frames per second per socket, and the burst allowed above it. */
  rateLimit?: { perSecond: number; burst: number };
  /** Voice mode; without it, `session.start {mode: "voice"}` is refused with `speech_unavailable`. */
  voice?: VoiceSessionFactory;
}

declare module 'fastify' {
  interface FastifyRequest {
    kioskSeniorId?: string;
  }
}

/** The kiosk WebSocket `/v1/kiosk` (protocol in docs/protocol.md). Needs @fastify/websocket registered on the app. */
export const kioskGateway: FastifyPluginAsync<KioskGatewayOptions> = async (app: FastifyInstance, opts) => {
  const alive = new WeakMap<WebSocket, boolean>();
  const seenTurns = new WeakMap<LiveSession, RecentTurnIds>();
  const context: KioskConnectionContext = {
    registry: opts.registry,
    rateLimit: opts.rateLimit ?? { perSecond: 20, burst: 40 },
    voice: opts.voice,
    seenTurnsOf: (session) => {
      let seen = seenTurns.get(session);
      if (!seen) seenTurns.set(session, (seen = new RecentTurnIds()));
      return seen;
    },
  };
  const heartbeat = setInterval(() => {
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
      // Before anything else of the request is looked at, as on every protected route.
      onRequest: async (request, reply) => {
        const token = bearerToken(request);
        let seniorId: string | null;
        try {
          seniorId = token ? await opts.seniorForToken(token) : null;
        } catch (err) {
          // The database is unreachable: a kiosk should retry (or go elsewhere), not give up on a 500.
          request.log.warn({ err }, 'kiosk token lookup failed');
          return reply.code(503).header('retry-after', '2').send({ error: 'unavailable', message: 'the runtime cannot check kiosk tokens right now; retry' });
        }
        if (!seniorId) {
          return reply.code(401).send({ error: 'unauthorized', message: token ? 'unknown kiosk token' : 'missing kiosk token (Authorization: Bearer or ?token=)' });
        }
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
