import type { FastifyInstance, FastifyPluginAsync } from 'fastify';
import type { WebSocket } from 'ws';
import { bearerToken } from '../auth.ts';
import { SeniorNotFoundError, type KioskLink, type LiveSession, type SessionRegistry } from '../session-registry.ts';
import { parseClientFrame, type ServerFrame } from './protocol.ts';
import { TokenBucket } from './rate-limit.ts';

export interface KioskGatewayOptions {
  registry: SessionRegistry;
  seniorForToken: (token: string) => Promise<string | null>;
  heartbeatMs: number;
  /** Frames per second per socket, and the burst allowed above it. */
  rateLimit?: { perSecond: number; burst: number };
}

declare module 'fastify' {
  interface FastifyRequest {
    kioskSeniorId?: string;
  }
}

/** The kiosk WebSocket `/v1/kiosk` (protocol in docs/protocol.md). Needs @fastify/websocket registered on the app. */
export const kioskGateway: FastifyPluginAsync<KioskGatewayOptions> = async (app: FastifyInstance, opts) => {
  const { registry } = opts;
  const rate = opts.rateLimit ?? { perSecond: 20, burst: 40 };
  const alive = new WeakMap<WebSocket, boolean>();
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
      preValidation: async (request, reply) => {
        const token = bearerToken(request);
        const seniorId = token ? await opts.seniorForToken(token) : null;
        if (!seniorId) {
          return reply.code(401).send({ error: 'unauthorized', message: token ? 'unknown kiosk token' : 'missing kiosk token (Authorization: Bearer or ?token=)' });
        }
        request.kioskSeniorId = seniorId;
      },
    },
    (socket, request) => {
      const seniorId = request.kioskSeniorId!;
      const bucket = new TokenBucket(rate.perSecond, rate.burst);
      let limitedNoticeAt = 0;
      let session: LiveSession | null = null;
      const link: KioskLink = {
        send: (frame: ServerFrame) => {
          if (socket.readyState === socket.OPEN) socket.send(JSON.stringify(frame));
        },
      };
      alive.set(socket, true);
      socket.on('pong', () => alive.set(socket, true));
      socket.on('close', () => {
        if (session) registry.detach(session, link);
      });
      socket.on('error', (err) => request.log.warn({ err, seniorId }, 'kiosk socket error'));

      socket.on('message', (data, isBinary) => {
        if (!bucket.take()) {
          // One notice per second at most: answering every flooded frame would amplify the flood.
          const t = Date.now();
          if (t - limitedNoticeAt >= 1000) {
            limitedNoticeAt = t;
            link.send({ type: 'error', code: 'rate_limited', message: `too many frames: at most ${rate.perSecond} per second; frame dropped` });
          }
          return;
        }
        if (isBinary) {
          link.send({ type: 'error', code: 'binary_not_supported', message: 'frames must be JSON text' });
          return;
        }
        const parsed = parseClientFrame(data.toString());
        if (!parsed.ok) {
          link.send({ type: 'error', code: parsed.code, message: parsed.message });
          return;
        }
        const frame = parsed.frame;
        switch (frame.type) {
          case 'ping':
            link.send({ type: 'pong' });
            return;
          case 'session.start':
            registry
              .start(seniorId, link, frame.resume === true)
              .then(({ session: started, resumed }) => {
                if (session && session !== started) registry.detach(session, link);
                session = started;
                link.send({ type: 'session.ready', sessionId: started.sessionId, seniorId, resumed });
              })
              .catch((err: unknown) => {
                request.log.error({ err, seniorId }, 'session start failed');
                if (err instanceof SeniorNotFoundError) socket.close(1008, 'senior not found');
                else socket.close(1011, 'session start failed');
              });
            return;
        }
        if (!session || session.link !== link || session.actor.getSnapshot().status !== 'active') {
          link.send({ type: 'error', code: 'no_session', message: 'no live session on this socket: send session.start first', ...('turnId' in frame ? { turnId: frame.turnId } : {}) });
          return;
        }
        if (frame.type === 'turn') session.actor.send({ type: 'TURN', turnId: frame.turnId, transcript: frame.transcript });
        else if (frame.type === 'interrupt') session.actor.send({ type: 'INTERRUPT', turnId: frame.turnId });
        else session.actor.send({ type: 'CLOSE', reason: 'ended' });
      });
    },
  );
};
