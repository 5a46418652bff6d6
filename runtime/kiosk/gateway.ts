import type { FastifyInstance, FastifyPluginAsync } from 'fastify';
import type { WebSocket } from 'ws';
import { bearerToken } from '../http/bearer.ts';
import { SeniorNotFoundError, ShuttingDownError, type LiveSession, type SessionRegistry } from '../sessions/session-registry.ts';
import { audioByteBudget, TokenBucket } from './token-bucket.ts';
import type { VoiceLink, VoiceSessionFactory, VoiceSessionHandle } from '../voice/voice-session.ts';
import { droppedTurnId, micFrameProblem, negotiateAudio, parseClientFrame, SERVICE_RESTART, VOICE_FRAME_TYPES, type ErrorCode, type ServerFrame } from '../protocol/messages.ts';

export interface KioskGatewayOptions {
  registry: SessionRegistry;
  seniorForToken: (token: string) => Promise<string | null>;
  heartbeatMs: number;
  /** Frames per second per socket, and the burst allowed above it. */
  rateLimit?: { perSecond: number; burst: number };
  /** Voice mode; without it, `session.start {mode: "voice"}` is refused with `speech_unavailable`. */
  voice?: VoiceSessionFactory;
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
  private voiceTurns = 0;

  /** The next voice turn's id, `v1`, `v2` …, skipping any a typed turn already took. */
  nextVoiceTurnId(): string {
    for (;;) {
      const id = `v${++this.voiceTurns}`;
      if (this.admit(id)) return id;
    }
  }

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
  const seenTurnsOf = (session: LiveSession): RecentTurnIds => {
    let seen = seenTurns.get(session);
    if (!seen) seenTurns.set(session, (seen = new RecentTurnIds()));
    return seen;
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
      const seniorId = request.kioskSeniorId!;
      const bucket = new TokenBucket(rate.perSecond, rate.burst);
      // Notices are throttled on the monotonic clock: a wall clock stepping back must not silence them.
      let limitedNoticeAt = -Infinity;
      const audioNoticeAt = new Map<ErrorCode, number>();
      let session: LiveSession | null = null;
      // Voice mode: the session's audio pipeline on this socket, and the microphone's own byte budget.
      let voice: VoiceSessionHandle | null = null;
      let audioBudget: ReturnType<typeof audioByteBudget> | null = null;
      const endVoice = () => {
        voice?.close();
        voice = null;
        audioBudget = null;
      };
      const link: VoiceLink = {
        send: (frame: ServerFrame) => {
          // The session is over on this socket (ended, or taken over by another socket): its voice session
          // goes now, as at a socket close, even if the kiosk keeps this socket open.
          if (frame.type === 'session.closed') endVoice();
          if (socket.readyState !== socket.OPEN) return;
          socket.send(JSON.stringify(frame));
          // This process is going away and takes no session any more: the kiosk reconnects, elsewhere.
          if (frame.type === 'session.closed' && frame.reason === 'shutdown') socket.close(SERVICE_RESTART, 'service restart');
        },
        sendAudio: (bytes: Uint8Array) => {
          if (socket.readyState === socket.OPEN) socket.send(bytes, { binary: true });
        },
        get unreadBytes() {
          return socket.readyState === socket.OPEN ? socket.bufferedAmount : Infinity;
        },
      };
      /** At most one notice a second per kind: answering every flooded frame would amplify the flood. */
      const noticeAudio = (code: 'audio_rate_limited' | 'speech_unavailable' | 'invalid_frame', message: string) => {
        const t = performance.now();
        if (t - (audioNoticeAt.get(code) ?? -Infinity) < 1000) return;
        audioNoticeAt.set(code, t);
        link.send({ type: 'error', code, message });
      };
      alive.set(socket, true);
      socket.on('pong', () => alive.set(socket, true));
      socket.on('close', () => {
        endVoice();
        if (session) registry.detach(session, link);
      });
      socket.on('error', (err) => request.log.warn({ err, seniorId }, 'kiosk socket error'));

      socket.on('message', (data, isBinary) => {
        // Microphone audio has its own byte budget: the text-frame limit never drops it, nor it text.
        if (isBinary && voice && audioBudget && session?.link === link) {
          const bytes = Array.isArray(data) ? Buffer.concat(data) : data instanceof ArrayBuffer ? Buffer.from(data) : data;
          // Checked before the budget: a refused frame spends none of it.
          const problem = micFrameProblem(bytes.length);
          if (problem !== null) {
            noticeAudio('invalid_frame', problem);
            return;
          }
          if (!audioBudget.take(bytes.length)) {
            noticeAudio('audio_rate_limited', 'microphone audio over 1.5× real time: frame dropped');
            return;
          }
          if (!voice.voiceInput) {
            noticeAudio('speech_unavailable', 'voice input is unavailable for this session (no speech-to-text service, or speech detection failed to start): send typed turns');
            return;
          }
          voice.pushAudio(pcmView(bytes));
          return;
        }
        if (!bucket.take()) {
          // A dropped turn is the senior's words lost: the kiosk is told which one, to send it again.
          const turnId = isBinary || socket.bufferedAmount > UNREAD_BYTES_LIMIT ? undefined : droppedTurnId(data.toString());
          if (turnId !== undefined) {
            link.send({ type: 'error', code: 'rate_limited', turnId, message: `turn dropped: more than ${rate.perSecond} frames per second; send it again` });
            return;
          }
          // Other frames: one notice per second at most, as answering every flooded frame would amplify the flood.
          const t = performance.now();
          if (t - limitedNoticeAt >= 1000) {
            limitedNoticeAt = t;
            link.send({ type: 'error', code: 'rate_limited', message: `too many frames: at most ${rate.perSecond} per second; frame dropped` });
          }
          return;
        }
        if (isBinary) {
          // Before any session.start, audio is early; in a text session, binary frames keep their error.
          if (!session) link.send({ type: 'error', code: 'audio_not_negotiated', message: 'audio before negotiation: send session.start with mode "voice" first' });
          else link.send({ type: 'error', code: 'binary_not_supported', message: 'frames must be JSON text (binary audio frames need a voice session: session.start with mode "voice")' });
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
          case 'session.start': {
            let negotiated: ReturnType<typeof negotiateAudio> | null = null;
            if (frame.mode === 'voice') {
              negotiated = negotiateAudio(frame.audio);
              if (!negotiated.ok) {
                link.send({ type: 'error', code: 'unsupported_audio_format', message: negotiated.message });
                return;
              }
              if (!opts.voice) {
                link.send({ type: 'error', code: 'speech_unavailable', message: 'this runtime has no voice mode' });
                return;
              }
            }
            registry
              .start(seniorId, link, frame.resume === true)
              .then(({ session: started, resumed }) => {
                if (session && session !== started) registry.detach(session, link);
                session = started;
                endVoice();
                if (!negotiated?.ok || !opts.voice) {
                  link.send({ type: 'session.ready', sessionId: started.sessionId, seniorId, resumed });
                  return;
                }
                const { input, output, aec } = negotiated;
                const turns = seenTurnsOf(started);
                voice = opts.voice.create({ session: started, link, output, aec, nextTurnId: () => turns.nextVoiceTurnId() });
                audioBudget = audioByteBudget(input.sampleRate);
                link.send({ type: 'session.ready', sessionId: started.sessionId, seniorId, resumed, mode: 'voice', audio: { input, output, aec, voiceInput: voice.voiceInput } });
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
        }
        if (!session || session.link !== link || session.actor.getSnapshot().status !== 'active') {
          link.send({ type: 'error', code: 'no_session', message: 'no live session on this socket: send session.start first', ...('turnId' in frame ? { turnId: frame.turnId } : {}) });
          return;
        }
        if (VOICE_FRAME_TYPES.has(frame.type) && !voice) {
          link.send({ type: 'error', code: 'audio_not_negotiated', message: `${frame.type} needs a voice session: session.start with mode "voice"` });
          return;
        }
        switch (frame.type) {
          case 'turn':
            if (!seenTurnsOf(session).admit(frame.turnId)) {
              link.send({ type: 'error', code: 'duplicate_turn', turnId: frame.turnId, message: `turnId ${JSON.stringify(frame.turnId)} was already used in this session; the turn is not answered again` });
              return;
            }
            // In voice mode a typed turn also cuts the reply audio playing, and is answered with speech.
            if (voice) voice.typedTurn(frame.turnId, frame.transcript);
            else session.actor.send({ type: 'TURN', turnId: frame.turnId, transcript: frame.transcript });
            return;
          case 'interrupt':
            if (voice) voice.interrupt(frame.turnId, frame.playedMs);
            else session.actor.send({ type: 'INTERRUPT', turnId: frame.turnId });
            return;
          case 'playback.progress':
            voice?.playbackProgress(frame.turnId, frame.playedMs);
            return;
          case 'playback.done':
            voice?.playbackDone(frame.turnId);
            return;
          case 'mic':
            voice?.mute(frame.muted);
            return;
          case 'session.end':
            endVoice();
            session.actor.send({ type: 'CLOSE', reason: 'ended' });
        }
      });
    },
  );
};

/**
 * The frame's samples as s16, viewed in place (no copy, no garbage per frame) when the bytes sit at an
 * even offset, which is how ws hands a whole frame; copied only at an odd offset of a pooled buffer.
 * ws never reuses a message's memory, and the listener copies what it keeps.
 */
function pcmView(bytes: Buffer): Int16Array {
  if (bytes.byteOffset % 2 === 0) return new Int16Array(bytes.buffer, bytes.byteOffset, bytes.length / 2);
  const pcm = new Int16Array(bytes.length / 2);
  new Uint8Array(pcm.buffer).set(bytes);
  return pcm;
}
