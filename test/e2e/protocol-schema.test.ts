import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type WebSocket from 'ws';
import { decodeAudioFrame } from '../../runtime/protocol/frame-header.ts';
import { ClientFrameSchema } from '../../runtime/protocol/messages.ts';
import { ServerFrameSchema } from '../../runtime/protocol/server-frames.ts';
import { KioskClient } from '../support/kiosk-client.ts';
import { jsonSchemaValidator, zodProblem } from '../support/protocol-schema.ts';
import { KIOSK_TOKEN } from '../support/runtime.ts';
import { concat, frenchSpeech, silence } from '../support/speech.ts';
import { VOICE_START, VoiceKiosk } from '../support/voice-kiosk.ts';
import { startVoiceRuntime, type VoiceRuntime } from '../support/voice-runtime.ts';

/**
 * Real sessions, text and voice, over real sockets: every frame the runtime writes is checked against
 * docs/protocol.schema.json (and the zod schemas it comes from), and so is every frame the kiosk sent
 * that the runtime took. The unit test proves the file is generated from the schemas; this one proves
 * the schemas are what goes over the wire.
 */

const ASKED = 'Je suis allée au marché ce matin avec ma fille';
/** Long enough (~9 s of fake speech) to be still playing when the kiosk interrupts it. */
const LONG_REPLY = ['Le marché du samedi est un vrai plaisir. ', 'On y trouve des fruits, des fromages et des fleurs de saison. ', 'Votre fille a dû aimer cette promenade avec vous.'];

let voice: VoiceRuntime;
let utterance: Int16Array;
const serverFrame = jsonSchemaValidator('serverFrame');
const clientFrame = jsonSchemaValidator('clientFrame');

beforeAll(async () => {
  voice = await startVoiceRuntime('protocol-schema');
  utterance = concat([silence(200), await frenchSpeech(`${ASKED}.`), silence(1000)]);
}, 60_000);

afterAll(() => voice?.stop());

/** What the runtime wrote on a socket, as it came off the wire: JSON text frames and binary frames. */
function wireOf(socket: WebSocket): { text: unknown[]; binary: Uint8Array[] } {
  const wire = { text: [] as unknown[], binary: [] as Uint8Array[] };
  socket.on('message', (raw, isBinary) => {
    if (isBinary) wire.binary.push(new Uint8Array(raw as Buffer));
    else wire.text.push(JSON.parse(raw.toString()));
  });
  return wire;
}

/** Every frame the runtime sent is a valid serverFrame, by the JSON Schema and by zod; returns their types. */
function expectValidServerFrames(frames: unknown[]): Set<string> {
  for (const frame of frames) {
    expect(zodProblem(ServerFrameSchema, frame)).toBeNull();
    expect(serverFrame(frame)).toBeNull();
  }
  return new Set(frames.map((f) => (f as { type: string }).type));
}

/** A frame the test sends as a kiosk would: it must be a valid clientFrame before it leaves. */
function sendValid(kiosk: { send(frame: unknown): void }, frame: Record<string, unknown>): void {
  expect(zodProblem(ClientFrameSchema, frame)).toBeNull();
  expect(clientFrame(frame)).toBeNull();
  kiosk.send(frame);
}

describe('the kiosk protocol on the wire matches docs/protocol.schema.json', () => {
  it('a text session: pong, ready, a cached and a streamed reply, refusals, closed', async () => {
    const { rt, mistral } = voice;
    mistral.mode = { kind: 'stream', chunks: ['Quelle bonne ', 'idée !'] };
    const k = await KioskClient.connect(rt.wsUrl, KIOSK_TOKEN);
    const wire = wireOf(k.socket);
    sendValid(k, { type: 'ping' });
    await k.next('pong');
    sendValid(k, { type: 'session.start' });
    await k.next('session.ready');
    sendValid(k, { type: 'turn', turnId: 't1', transcript: 'Bonjour' });
    expect(await k.next((f) => f.type === 'reply.done' && f.turnId === 't1')).toMatchObject({ flux: 'cache' });
    sendValid(k, { type: 'turn', turnId: 't2', transcript: 'Je suis allée au marché ce matin' });
    await k.next((f) => f.type === 'reply.done' && f.turnId === 't2');
    sendValid(k, { type: 'turn', turnId: 't2', transcript: 'Je suis allée au marché ce matin' });
    expect(await k.next('error')).toMatchObject({ code: 'duplicate_turn', turnId: 't2' });
    // What the gateway refuses as invalid, the JSON Schema refuses too.
    const incomplete = { type: 'turn', turnId: 't3' };
    expect(clientFrame(incomplete)).toMatch(/not a valid clientFrame/);
    k.send(incomplete);
    expect(await k.next('error')).toMatchObject({ code: 'invalid_frame', turnId: 't3' });
    k.send('{not json');
    expect(await k.next('error')).toMatchObject({ code: 'invalid_json' });
    k.socket.send(Buffer.alloc(640));
    expect(await k.next('error')).toMatchObject({ code: 'binary_not_supported' });
    sendValid(k, { type: 'session.end' });
    expect(await k.next('session.closed')).toMatchObject({ reason: 'ended' });
    k.close();

    expect(wire.binary).toEqual([]);
    const types = expectValidServerFrames(wire.text);
    expect([...types].sort()).toEqual(['error', 'pong', 'reply.delta', 'reply.done', 'session.closed', 'session.ready']);
  });

  it('a voice session: a spoken turn with its reply audio, then a typed turn interrupted while it plays', async () => {
    const { rt, mistral, voxtral } = voice;
    mistral.mode = { kind: 'stream', chunks: ['Quelle bonne idée que ', 'ce marché, le matin on ', 'y est bien.'] };
    voxtral.utterances.push({ text: ASKED });
    const k = await VoiceKiosk.connect(rt.wsUrl, KIOSK_TOKEN);
    const wire = wireOf(k.socket);
    sendValid(k, VOICE_START);
    expect(await k.next('session.ready')).toMatchObject({ mode: 'voice', audio: { voiceInput: true } });
    await k.speak(utterance);
    const { turnId } = await k.next('transcript.final', 0);
    await k.next((f) => f.type === 'reply.audio.end' && f.turnId === turnId, 0);
    sendValid(k, { type: 'playback.progress', turnId, playedMs: 250 });
    sendValid(k, { type: 'playback.done', turnId });
    sendValid(k, { type: 'mic', muted: true });
    sendValid(k, { type: 'mic', muted: false });

    mistral.mode = { kind: 'stream', chunks: LONG_REPLY };
    sendValid(k, { type: 'turn', turnId: 't1', transcript: 'Parlez-moi du marché' });
    await k.next((f) => f.type === 'reply.audio.start' && f.turnId === 't1', 0);
    sendValid(k, { type: 'interrupt', turnId: 't1', playedMs: 0 });
    await k.next((f) => f.type === 'reply.audio.clear' && f.turnId === 't1', 0);
    sendValid(k, { type: 'session.end' });
    await k.next('session.closed', 0);
    k.close();

    const types = expectValidServerFrames(wire.text);
    for (const type of ['session.ready', 'vad', 'transcript.delta', 'transcript.final', 'reply.delta', 'reply.done', 'reply.audio.start', 'reply.audio.mark', 'reply.audio.end', 'reply.audio.clear', 'session.closed']) {
      expect(types, type).toContain(type);
    }
    // The binary frames are reply audio with the header the schema's $comment describes, of the turns announced.
    expect(wire.binary.length).toBeGreaterThan(0);
    const announced = new Set(wire.text.filter((f) => (f as { type: string }).type === 'reply.audio.start').map((f) => (f as { turnId: string }).turnId));
    for (const bytes of wire.binary) expect(announced).toContain(decodeAudioFrame(bytes).turnId);
  }, 60_000);
});
