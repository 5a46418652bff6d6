import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { loadCacheVariations } from '../../adapters/fluxes/cache-flux.adapter.ts';
import { generateToken } from '../../adapters/postgres/tokens.ts';
import { opusCodec } from '../../adapters/voice/opus-codec.ts';
import { alignedSnrDb } from '../support/audio-quality.ts';
import type { FakeMistral } from '../support/fake-mistral.ts';
import { fakeSpeechDurationMs, fakeSpeechPcm, type FakeVoxtral } from '../support/fake-voxtral.ts';
import { KIOSK_TOKEN, type TestRuntime } from '../support/runtime.ts';
import { startVoiceRuntime } from '../support/voice-runtime.ts';
import { concat, frenchSpeech, silence } from '../support/speech.ts';
import { OPUS_START, VOICE_START, VoiceKiosk } from '../support/voice-kiosk.ts';

const OUTPUT_RATE = 24_000;
/** 20 ms Opus packets at the reply's rate. */
const PACKET_SAMPLES = (OUTPUT_RATE * 20) / 1000;
/** Opus is lossy: the decoded tone is compared with what the fake spoke, aligned for the codec's delay. */
const MIN_SNR_DB = 8;

let voxtral: FakeVoxtral;
let mistral: FakeMistral;
let rt: TestRuntime;
let stop: (() => Promise<void>) | undefined;
/** « Je suis allée au marché ce matin avec ma fille », then a second of silence (ends the utterance). */
let utterance: Int16Array;

beforeAll(async () => {
  ({ rt, voxtral, mistral, stop } = await startVoiceRuntime('opus'));
  utterance = concat([silence(200), await frenchSpeech('Je suis allée au marché ce matin avec ma fille.'), silence(1000)]);
}, 60_000);

beforeEach(() => {
  voxtral.utterances.length = 0;
});

afterAll(() => stop?.());

/** The kiosk's microphone encoder, as a browser's AudioEncoder would be (16 kHz capture, 20 ms packets). */
function micEncoder() {
  const encoder = opusCodec().encoder(16_000);
  return { encode: (frame: Int16Array) => encoder.encode(frame), close: () => encoder.close() };
}

/** The runtime's `kohami_opus_encoded_seconds_total`: the reply audio it encoded itself. */
const encodedSeconds = async () => (await rt.metrics.registry.getSingleMetric('kohami_opus_encoded_seconds_total')!.get()).values[0]?.value ?? 0;

const micBytes = (first: number) => voxtral.sockets.slice(first).reduce((n, s) => n + s.audioBytes, 0);

describe('Opus on the kiosk socket', () => {
  it('a kiosk negotiates Opus both ways: its Opus speech reaches the recognizer as 16 kHz PCM, and the reply comes as Opus packets that decode to what was spoken', async () => {
    const pieces = ['Quelle bonne idée que ce marché,', 'le matin on y est bien.'];
    mistral.mode = { kind: 'stream', chunks: ['Quelle bonne idée que ', 'ce marché, le matin on y est bien.'] };
    voxtral.utterances.push({ text: 'Je suis allée au marché ce matin avec ma fille' });
    const k = await VoiceKiosk.connect(rt.wsUrl, KIOSK_TOKEN);
    k.send(OPUS_START);
    expect(await k.next('session.ready')).toMatchObject({
      mode: 'voice',
      audio: { input: { encoding: 'opus', sampleRate: 16000 }, output: { encoding: 'opus', sampleRate: OUTPUT_RATE }, voiceInput: true },
    });
    const first = voxtral.sockets.length;
    const speechAsked = voxtral.speechRequests.length;
    const encodedBefore = await encodedSeconds();
    const mic = micEncoder();
    let sentBytes = 0;
    await k.speak(utterance, 1.3, undefined, (frame) => {
      const packet = mic.encode(frame);
      sentBytes += packet.length;
      return packet;
    });
    mic.close();
    expect(await k.next('transcript.final', 0)).toMatchObject({ turnId: 'v1', text: 'Je suis allée au marché ce matin avec ma fille' });
    // The recognizer got PCM s16 at 16 kHz (32 bytes a ms): the speech it heard, pre-roll included, not
    // the packets' bytes — which were over 8× fewer than that PCM.
    const heardMs = micBytes(first) / 32;
    expect(heardMs).toBeGreaterThan(1000);
    expect(sentBytes * 8).toBeLessThan((utterance.length * 2));

    const end = await k.next((f) => f.type === 'reply.audio.end' && f.turnId === 'v1', 0);
    expect(k.ofType('reply.audio.start', 'v1')).toEqual([{ type: 'reply.audio.start', turnId: 'v1', encoding: 'opus', sampleRate: OUTPUT_RATE }]);
    // One 20 ms packet a frame, the header unchanged: contiguous sample offsets at the negotiated rate.
    const frames = k.audio.filter((a) => a.turnId === 'v1');
    let offset = 0;
    for (const frame of frames) {
      expect(frame.sampleOffset).toBe(offset);
      expect(frame.pcm.length).toBe(PACKET_SAMPLES);
      offset += frame.pcm.length;
    }
    expect(end.durationMs).toBe(Math.round((offset * 1000) / OUTPUT_RATE));
    // The reply's last few ms are padded to a whole packet; the marks stay where the sentences end.
    const expectedSamples = pieces.reduce((n, p) => n + (fakeSpeechDurationMs(p) * OUTPUT_RATE) / 1000, 0);
    expect(offset - expectedSamples).toBeGreaterThanOrEqual(0);
    expect(offset - expectedSamples).toBeLessThan(PACKET_SAMPLES);
    const marks = k.ofType('reply.audio.mark', 'v1');
    expect(marks.map((m) => m.sampleOffset)).toEqual([(fakeSpeechDurationMs(pieces[0]!) * OUTPUT_RATE) / 1000, expectedSamples]);
    // What the kiosk decodes is the fake's tone, through the codec.
    const spoken = concat(pieces.map((p) => Int16Array.from(fakeSpeechPcm(p, 'tone'), (x) => Math.round(x * 32767))));
    const decoded = concat(frames.map((f) => f.pcm));
    const lag = (OUTPUT_RATE * 40) / 1000;
    expect(alignedSnrDb(spoken.subarray(0, decoded.length - lag), decoded, lag).snrDb).toBeGreaterThan(MIN_SNR_DB);
    // Over 8× fewer bytes than the PCM they stand for.
    const packetBytes = k.packets.filter((p) => p.turnId === 'v1').reduce((n, p) => n + p.bytes, 0);
    expect(packetBytes * 8).toBeLessThan(offset * 2);
    // Relayed: the speech service was asked for Opus, and the runtime encoded none of the reply.
    expect(voxtral.speechRequests.slice(speechAsked).filter((r) => pieces.includes(String(r.body.input))).map((r) => r.body.response_format)).toEqual(['opus', 'opus']);
    expect(await encodedSeconds()).toBe(encodedBefore);
    k.close();
  }, 30_000);

  it('an interrupt over a relayed reply keeps what was heard: the sentences whose marks (from the packets’ durations) were played past', async () => {
    const reply = ['Le marché du samedi est un vrai plaisir. ', 'On y trouve des fruits, des fromages et des fleurs de saison. ', 'Votre fille a dû aimer cette promenade avec vous.'];
    mistral.mode = { kind: 'stream', chunks: reply };
    const k = await VoiceKiosk.connect(rt.wsUrl, KIOSK_TOKEN);
    k.send(OPUS_START);
    await k.next('session.ready');
    k.send({ type: 'turn', turnId: 'long', transcript: 'Parle-moi du marché' });
    const mark = await k.next((f) => f.type === 'reply.audio.mark' && f.turnId === 'long', 0);
    expect(mark.sampleOffset).toBe((fakeSpeechDurationMs(reply[0]!.trim()) * OUTPUT_RATE) / 1000);
    k.send({ type: 'interrupt', turnId: 'long', playedMs: Math.ceil(((mark.sampleOffset as number) * 1000) / OUTPUT_RATE) + 10 });
    expect(await k.next('reply.audio.clear')).toMatchObject({ turnId: 'long' });
    const session = rt.registry.list().find((s) => s.actor.getSnapshot().context.turns.some((t) => t.turnId === 'long'))!;
    expect(session.actor.getSnapshot().context.turns.find((t) => t.turnId === 'long')).toMatchObject({ reply: reply[0]!.trim(), interrupted: true });
    k.close();
  }, 30_000);

  it('a greeting line said twice is encoded once: the second time its kept packets go out, with nothing encoded', async () => {
    const senior = await rt.directory.createSenior({ displayName: 'Odette Martin', preferredName: 'Odette', onboardingDone: true });
    const token = generateToken('kiosk');
    await rt.directory.addDevice(senior, token);
    const greetingLines = loadCacheVariations().greeting.length;
    const k = await VoiceKiosk.connect(rt.wsUrl, token);
    k.send(OPUS_START);
    await k.next('session.ready');
    await expect.poll(() => voxtral.speechRequests.filter((r) => String(r.body.input).includes('Odette') && r.completed)).toHaveLength(greetingLines);
    // The greetings come in turn: one more turn than there are of them says the first one again.
    const said = new Map<string, { encoded: number; payloads: number[][] }>();
    for (let turn = 0; turn <= greetingLines; turn++) {
      const before = await encodedSeconds();
      k.send({ type: 'turn', turnId: `g${turn}`, transcript: 'Bonjour' });
      const done = await k.next((f) => f.type === 'reply.done' && f.turnId === `g${turn}`, 0);
      expect(done).toMatchObject({ flux: 'cache', text: expect.stringContaining('Odette') });
      const end = await k.next((f) => f.type === 'reply.audio.end' && f.turnId === `g${turn}`, 0);
      const payloads = k.packets.filter((p) => p.turnId === `g${turn}`).map((p) => [...p.payload]);
      const encoded = (await encodedSeconds()) - before;
      const first = said.get(done.text as string);
      if (!first) {
        // Encoded as it is sent, whole packets: as many seconds as the line's audio.
        expect(encoded).toBeCloseTo((end.durationMs as number) / 1000, 5);
        said.set(done.text as string, { encoded, payloads });
      } else {
        expect(encoded).toBe(0);
        expect(payloads).toEqual(first.payloads);
      }
    }
    expect(said.size).toBe(greetingLines);
    k.close();
  }, 40_000);

  it('a malformed packet is refused with invalid_frame; the session lives on and hears the next utterance', async () => {
    mistral.mode = { kind: 'stream', chunks: ['Bien.'] };
    voxtral.utterances.push({ text: 'Je suis allée au marché ce matin avec ma fille' });
    const k = await VoiceKiosk.connect(rt.wsUrl, KIOSK_TOKEN);
    // Opus in, PCM out: each direction is negotiated on its own.
    k.send({ ...OPUS_START, audio: { ...OPUS_START.audio, output: VOICE_START.audio.output } });
    expect(await k.next('session.ready')).toMatchObject({ audio: { input: { encoding: 'opus' }, output: { encoding: 'pcm_s16le', sampleRate: OUTPUT_RATE } } });
    // A header that passes the gateway's pre-check (one SILK 20 ms packet of two frames) whose first
    // frame's length runs past the packet: only the decoder sees it is corrupt.
    k.socket.send(Uint8Array.of(0x0a, 200, 1, 2, 3));
    expect(await k.next('error')).toMatchObject({ code: 'invalid_frame', message: expect.stringContaining('one Opus packet') });
    const mic = micEncoder();
    await k.speak(utterance, 1.3, undefined, (frame) => mic.encode(frame));
    mic.close();
    expect(await k.next('transcript.final', 0)).toMatchObject({ turnId: 'v1' });
    const end = await k.next((f) => f.type === 'reply.audio.end' && f.turnId === 'v1', 0);
    expect(end.durationMs).toBeGreaterThan(0);
    expect(k.ofType('reply.audio.start', 'v1')).toMatchObject([{ encoding: 'pcm_s16le' }]);
    k.close();
  }, 30_000);

  it('a packet the pre-check refuses (120 ms) costs no decoding, and PCM frames on an Opus session are not packets', async () => {
    const k = await VoiceKiosk.connect(rt.wsUrl, KIOSK_TOKEN);
    k.send(OPUS_START);
    await k.next('session.ready');
    // Two SILK 60 ms frames: 120 ms, over the 60 ms a packet may carry.
    k.socket.send(Uint8Array.of(0x19, 1, 2));
    expect(await k.next('error')).toMatchObject({ code: 'invalid_frame', message: expect.stringContaining('120 ms') });
    k.close();
  });

  it('a PCM kiosk is unchanged; a kiosk listing Opus after PCM gets PCM', async () => {
    mistral.mode = { kind: 'stream', chunks: ['Très bien.'] };
    const k = await VoiceKiosk.connect(rt.wsUrl, KIOSK_TOKEN);
    k.send({ ...VOICE_START, audio: { ...VOICE_START.audio, output: { accept: [{ encoding: 'pcm_s16le', sampleRate: OUTPUT_RATE }, { encoding: 'opus', sampleRate: OUTPUT_RATE }] } } });
    expect(await k.next('session.ready')).toMatchObject({ audio: { input: { encoding: 'pcm_s16le', sampleRate: 16000 }, output: { encoding: 'pcm_s16le', sampleRate: OUTPUT_RATE } } });
    k.send({ type: 'turn', turnId: 'typed-1', transcript: 'Je tape ma question' });
    const end = await k.next((f) => f.type === 'reply.audio.end' && f.turnId === 'typed-1', 0);
    const frames = k.audio.filter((a) => a.turnId === 'typed-1');
    expect(frames.reduce((n, f) => n + f.pcm.length, 0)).toBe((end.durationMs as number) * (OUTPUT_RATE / 1000));
    expect(k.packets).toEqual([]);
    k.close();
  });
});
