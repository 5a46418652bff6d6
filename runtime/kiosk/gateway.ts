import type { FastifyInstance, FastifyPluginAsync } from 'fastify';
import type { WebSocket } from 'ws';
import { bearerToken } from '../auth.ts';
import { SeniorNotFoundError, ShuttingDownError, type KioskLink, type LiveSession, type SessionRegistry } from '../session-registry.ts';
import { droppedTurnId, parseClientFrame, SERVICE_RESTART, type ServerFrame } from './protocol.ts';
import { TokenBucket } from './rate-limit.ts';

export interface KioskGatewayOptions {
  registry: SessionRegistry;
  seniorForToken: (token: string) => Promise<string | null>;
  heartbeatMs: number;
  /** Frames per second per socket, and the burst allowed above it. */
  rateLimit?: { perSecond: number; burst: number };
}

/** How many of a session's latest turnIds are remembered to refuse a replayed one. */
export const REMEMBERED_TURN_IDS = 1000;
/**
 * A kiosk with this much unsent data is not reading: its dropped turns are no longer answered one by
 * one (each answer would grow the buffer), only by the once-a-second notice.
 */
const UNREAD_BYTES_LIMIT = 256 * 1024;

/** The latest turnIds of one session, oldest forgotten first. */
class RecentTurnIds {
  private readonly ids = new Set<string>();

  /** False if the id was already seen; otherwise remembers it. */
  admit(id: string): boolean {
    if (this.ids.has(id)) return false;
    this.ids.add(id);
    if (this.ids.size > REMEMBERED_TURN_IDS) this.ids.delete(this.ids.values().next().value!);
    return true;
  }
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
  // Keyed by the session, not the socket: a resume on a new socket keeps what the session has seen.
  const seenTurns = new WeakMap<LiveSession, RecentTurnIds>();
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
      const seniorId = request.kioskSeniorId!;
      const bucket = new TokenBucket(rate.perSecond, rate.burst);
      let limitedNoticeAt = 0;
      let session: LiveSession | null = null;
      const link: KioskLink = {
        send: (frame: ServerFrame) => {
          if (socket.readyState !== socket.OPEN) return;
          socket.send(JSON.stringify(frame));
          // This process is going away and takes no session any more: the kiosk reconnects, elsewhere.
          if (frame.type === 'session.closed' && frame.reason === 'shutdown') socket.close(SERVICE_RESTART, 'service restart');
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
          // A dropped turn is the senior's words lost: the kiosk is told which one, to send it again.
          const turnId = isBinary || socket.bufferedAmount > UNREAD_BYTES_LIMIT ? undefined : droppedTurnId(data.toString());
          if (turnId !== undefined) {
            link.send({ type: 'error', code: 'rate_limited', turnId, message: `turn dropped: more than ${rate.perSecond} frames per second; send it again` });
            return;
          }
          // Other frames: one notice per second at most, as answering every flooded frame would amplify the flood.
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
          link.send({ type: 'error', code: parsed.code, message: parsed.message, ...(parsed.turnId !== undefined ? { turnId: parsed.turnId } : {}) });
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
                if (err instanceof ShuttingDownError) {
                  // Expected during a deploy, not a failure.
                  request.log.info({ seniorId }, 'session start refused: shutting down');
                  link.send({ type: 'session.closed', reason: 'shutdown' });
                  return;
                }
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
        if (frame.type === 'turn') {
          let seen = seenTurns.get(session);
          if (!seen) seenTurns.set(session, (seen = new RecentTurnIds()));
          if (!seen.admit(frame.turnId)) {
            link.send({ type: 'error', code: 'duplicate_turn', turnId: frame.turnId, message: `turnId ${JSON.stringify(frame.turnId)} was already used in this session; the turn is not answered again` });
            return;
          }
          session.actor.send({ type: 'TURN', turnId: frame.turnId, transcript: frame.transcript });
        } else if (frame.type === 'interrupt') session.actor.send({ type: 'INTERRUPT', turnId: frame.turnId });
        else session.actor.send({ type: 'CLOSE', reason: 'ended' });
      });
    },
  );
};
