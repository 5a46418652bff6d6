import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { MistralTranscriber, TranscriberUnavailableError, TRANSCRIBER_RECONNECT } from '../../adapters/voice/mistral-transcriber.ts';
import { FakeMistral } from '../support/fake-mistral.ts';
import { FakeVoxtral } from '../support/fake-voxtral.ts';
import { KIOSK_TOKEN, startTestRuntime, type TestRuntime } from '../support/runtime.ts';
import { concat, frenchSpeech, silence, toneFrames } from '../support/speech.ts';
import { TcpRelay } from '../support/tcp-relay.ts';
import { VoiceKiosk } from '../support/voice-kiosk.ts';
import { QUICK_ENDPOINT } from '../support/endpointing.ts';

/**
 * A transcription service (or a proxy before it) that accepts every socket, configures it, then cuts
 * it after some audio. Before, back-off applied only between failed connects: each accepted socket
 * reset it, so every cut reconnected at once and replayed the whole utterance — one 18 s utterance
 * opened 781 sockets, and the kiosk was never told the service had failed.
 */

/** Past its upgrade request, a socket carries this much (≈ 0.7 s of audio appends) and is cut. */
const DROP_AFTER_BYTES = 32 * 1024;
/** The utterance of the incident: 18 s of speech, appended as the listener hands it on. */
const UTTERANCE_MS = 18_000;

const voxtral = new FakeVoxtral();
const mistral = new FakeMistral(voxtral);
let relay: TcpRelay;

beforeAll(async () => {
  await mistral.start();
  relay = await new TcpRelay().start(new URL(mistral.baseUrl));
  relay.dropWebSocketsAfter = DROP_AFTER_BYTES;
});
afterAll(async () => {
  await relay.stop();
  await voxtral.stop();
  await mistral.stop();
});
beforeEach(() => {
  voxtral.sockets.length = 0;
  voxtral.utterances.length = 0;
  relay.webSocketOpenedAt.length = 0;
  relay.webSocketBytes = 0;
});

describe('a service that accepts then drops every transcription socket', () => {
  it('reopens with a jittered exponential back-off carried across accepted sockets, at most maxReconnects times, then fails the utterance as unavailable', async () => {
    const { backoffMs, maxBackoffMs, maxReconnects } = TRANSCRIBER_RECONNECT;
    // The flush's own bound is far off: only the reconnect bound can end this utterance.
    const stream = await new MistralTranscriber({ apiKey: 'test-key', baseUrl: relay.url, env: 'test', flushTimeoutMs: 20_000 }).open({ contextBias: [], signal: new AbortController().signal });
    for (const frame of toneFrames(UTTERANCE_MS)) stream.append(frame);
    await expect(stream.flush(new AbortController().signal)).rejects.toThrow(new TranscriberUnavailableError(`transcription socket reopened ${maxReconnects} times without a transcript: giving up on this stream`));

    // Every socket was accepted and configured, then cut: the first, and maxReconnects more.
    expect(relay.webSocketOpenedAt).toHaveLength(1 + maxReconnects);
    expect(voxtral.sockets).toHaveLength(1 + maxReconnects);
    expect(voxtral.sockets.every((s) => s.updates.length === 1)).toBe(true);
    // Each reopening waited at least the floor of its jittered delay, doubling from socket to socket.
    const opened = relay.webSocketOpenedAt;
    for (let k = 1; k < opened.length; k++) {
      expect(opened[k]! - opened[k - 1]!, `gap before socket ${k + 1}`).toBeGreaterThanOrEqual(Math.min(maxBackoffMs, backoffMs * 2 ** (k - 1)) / 2 - 1);
    }
    // What the client sent is bounded by those few sockets (each cut after DROP_AFTER_BYTES and the frame in flight).
    expect(relay.webSocketBytes).toBeLessThan((1 + maxReconnects) * (DROP_AFTER_BYTES + 64 * 1024 + 4096));

    // The stream has given up: more speech opens no socket, and its flush fails at once the same way.
    for (const frame of toneFrames(1_000)) stream.append(frame);
    await expect(stream.flush(new AbortController().signal)).rejects.toBeInstanceOf(TranscriberUnavailableError);
    expect(relay.webSocketOpenedAt).toHaveLength(1 + maxReconnects);
    stream.close();
  }, 30_000);
});

describe('the kiosk of a senior speaking to that service', () => {
  let rt: TestRuntime;
  let hello: Int16Array;

  beforeAll(async () => {
    // A budget longer than the whole back-off: the utterance fails on the reconnect bound, not as a late transcript.
    rt = await startTestRuntime({}, { MISTRAL_API_KEY: 'test-key', MISTRAL_BASE_URL: relay.url, ...QUICK_ENDPOINT, STT_BUDGET_MS: '10000' });
    hello = concat([silence(200), await frenchSpeech('Bonjour, je voulais vous raconter ma matinée au marché.'), silence(1000)]);
  }, 60_000);
  afterAll(async () => {
    await rt?.close();
  });

  it('is told speech_unavailable once the reconnects run out, and hears the SOS line', async () => {
    const k = await VoiceKiosk.connect(rt.wsUrl, KIOSK_TOKEN);
    expect(await k.start()).toMatchObject({ audio: { voiceInput: true } });
    await k.speak(hello);
    expect(await k.next('error', 0)).toMatchObject({ code: 'speech_unavailable' });
    expect(await k.next((f) => f.type === 'reply.done' && f.flux === 'sos', 0)).toMatchObject({ reason: 'transcription' });
    expect(relay.webSocketOpenedAt.length).toBeLessThanOrEqual(1 + TRANSCRIBER_RECONNECT.maxReconnects);
    k.close();
  }, 30_000);
});
