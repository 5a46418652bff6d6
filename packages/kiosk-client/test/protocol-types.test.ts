import { describe, expect, expectTypeOf, it } from 'vitest';
import { CLIENT_FRAME_SCHEMAS, type ClientFrame as RuntimeClientFrame } from '../../../runtime/protocol/messages.ts';
import { ERROR_CODES, SERVER_FRAME_SCHEMAS, type ServerFrame as RuntimeServerFrame } from '../../../runtime/protocol/server-frames.ts';
import { parseServerFrame, SERVER_FRAME_TYPES, type ClientFrame, type ServerErrorCode, type ServerFrame } from '../src/index.ts';

/**
 * The package writes the protocol's types out (it depends on nothing, the runtime's zod least of all):
 * these assertions fail `npm run typecheck` the day they drift from the schemas the runtime sends and
 * parses with, and the runtime checks below fail the suite.
 */
type Of<U, K> = Extract<U, { type: K }>;

describe('the package\'s protocol types are the runtime\'s', () => {
  it('server frames: the same types, frame by frame, and the same list', () => {
    expectTypeOf<ServerFrame>().toEqualTypeOf<RuntimeServerFrame>();
    expectTypeOf<Of<ServerFrame, 'session.ready'>>().toEqualTypeOf<Of<RuntimeServerFrame, 'session.ready'>>();
    expectTypeOf<Of<ServerFrame, 'reply.done'>>().toEqualTypeOf<Of<RuntimeServerFrame, 'reply.done'>>();
    expectTypeOf<Of<ServerFrame, 'error'>>().toEqualTypeOf<Of<RuntimeServerFrame, 'error'>>();
    expectTypeOf<ServerErrorCode>().toEqualTypeOf<(typeof ERROR_CODES)[number]>();
    expect([...SERVER_FRAME_TYPES].sort()).toEqual(Object.keys(SERVER_FRAME_SCHEMAS).sort());
  });

  it('client frames: the same types', () => {
    expectTypeOf<ClientFrame>().toEqualTypeOf<RuntimeClientFrame>();
    expectTypeOf<Of<ClientFrame, 'session.start'>>().toEqualTypeOf<Of<RuntimeClientFrame, 'session.start'>>();
    expect(Object.keys(CLIENT_FRAME_SCHEMAS).sort()).toEqual(['interrupt', 'mic', 'ping', 'playback.done', 'playback.progress', 'session.end', 'session.start', 'turn']);
  });

  it('every field the client requires of a frame, the runtime\'s schema requires too', () => {
    // A frame the schema accepts with only its required fields must pass the client's check.
    const minimal: { [K in ServerFrame['type']]: Of<ServerFrame, K> } = {
      'session.ready': { type: 'session.ready', sessionId: 's', seniorId: 'p', resumed: false },
      'reply.delta': { type: 'reply.delta', turnId: 't', text: '' },
      'reply.done': { type: 'reply.done', turnId: 't', text: '', flux: 'cache', latencyMs: 0 },
      error: { type: 'error', code: 'invalid_json', message: '' },
      'session.closed': { type: 'session.closed', reason: 'ended' },
      pong: { type: 'pong' },
      vad: { type: 'vad', state: 'speech_started' },
      'transcript.delta': { type: 'transcript.delta', text: '' },
      'transcript.final': { type: 'transcript.final', turnId: 't', text: '' },
      'reply.audio.start': { type: 'reply.audio.start', turnId: 't', encoding: 'opus', sampleRate: 48000 },
      'reply.audio.mark': { type: 'reply.audio.mark', turnId: 't', sampleOffset: 0, textOffset: 0 },
      'reply.audio.end': { type: 'reply.audio.end', turnId: 't', durationMs: 0 },
      'reply.audio.clear': { type: 'reply.audio.clear', turnId: 't' },
      'reply.audio.pause': { type: 'reply.audio.pause', turnId: 't' },
      'reply.audio.resume': { type: 'reply.audio.resume', turnId: 't' },
    };
    for (const frame of Object.values(minimal)) {
      expect(SERVER_FRAME_SCHEMAS[frame.type].safeParse(frame).success, frame.type).toBe(true);
      expect(parseServerFrame(JSON.stringify(frame))).toEqual({ ok: true, frame });
    }
  });
});
