import { readFileSync } from 'node:fs';
import { Mistral } from '@mistralai/mistralai';
import pg from 'pg';
import pino from 'pino';
import { afterAll, beforeAll, beforeEach, describe, expect, it, vi } from 'vitest';
import { loadCacheVariations } from '../../adapters/fluxes/cache-flux.adapter.ts';
import { NEUTRAL_REPLY } from '../../adapters/fluxes/memory-flux.adapter.ts';
import { EspeakSpeaker, ESPEAK_SAMPLE_RATE } from '../../adapters/voice/espeak-speaker.ts';
import { SPEECH_WORKER_STUCK_MS } from '../../adapters/voice/speech-worker.ts';
import { FallbackSpeaker } from '../../runtime/voice/fallback-speaker.ts';
import { LINE_RETRY_MS, LineCache, SharedLines, sessionLines } from '../../runtime/voice/line-cache.ts';
import { MistralSpeaker, SpeechServiceError } from '../../adapters/voice/mistral-speaker.ts';
import { MistralTranscriber, TranscriberUnavailableError } from '../../adapters/voice/mistral-transcriber.ts';
import { TranscriptionTimeoutError, type TranscriptionStream } from '../../machines/voice/voice.port.ts';
import { float32ToS16 } from '../../machines/voice/resample.ts';
import { PgConsentAdapter } from '../../adapters/postgres/pg-consent.adapter.ts';
import { InvalidMistralBaseUrlError } from '../../adapters/mistral/base-url.ts';
import { loadConfig } from '../../runtime/config.ts';
import { createMetrics } from '../../runtime/metrics.ts';
import type { LiveSession } from '../../runtime/sessions/session-registry.ts';
import { createVoiceServices } from '../../runtime/voice/voice-services.ts';
import { startSession } from '../support/session-harness.ts';
import { streamingModel } from '../support/models.ts';
import { FakeMistral } from '../support/fake-mistral.ts';
import { FakeVoxtral, fakeSpeechDurationMs, fakeSpeechPcm, isUndocumentedSetting } from '../support/fake-voxtral.ts';
import { expectContractViolations } from '../support/contract-violations.ts';
import { toneFrames } from '../support/speech.ts';

// One server answers chat, embeddings and audio, as MISTRAL_BASE_URL does in production.
const voxtral = new FakeVoxtral();
const mistral = new FakeMistral(voxtral);
const KEY = 'test-key';

beforeAll(async () => {
  await mistral.start();
});
afterAll(async () => {
  await voxtral.stop();
  await mistral.stop();
});
beforeEach(() => {
  voxtral.utterances.length = 0;
  voxtral.behaviours.clear();
  voxtral.sockets.length = 0;
  voxtral.speechRequests.length = 0;
  voxtral.refuseConnections = 0;
  voxtral.refused = 0;
  voxtral.transcriptionLatencyMs = 0;
  voxtral.speechLatencyMs = 0;
  voxtral.speechDeltaIntervalMs = 0;
  voxtral.speechStatus = 200;
  voxtral.speechSignal = 'tone';
});

function transcriber(extra: Partial<ConstructorParameters<typeof MistralTranscriber>[0]> = {}) {
  return new MistralTranscriber({ apiKey: KEY, baseUrl: mistral.baseUrl, env: 'test', backoffMs: 10, ...extra });
}

async function collect(iterable: AsyncIterable<Int16Array>): Promise<Int16Array[]> {
  const chunks: Int16Array[] = [];
  for await (const chunk of iterable) chunks.push(chunk);
  return chunks;
}

/**
 * Lets sockets, workers and promises run until `check` holds, for at most 10 s of wall-clock time.
 * Not vi.waitFor: under fake timers it advances the clock while it polls; setImmediate and Date are never faked here.
 */
async function until(check: () => boolean): Promise<void> {
  const deadline = Date.now() + 10_000;
  while (!check() && Date.now() < deadline) await new Promise((resolve) => setImmediate(resolve));
  expect(check()).toBe(true);
}

const samples = (chunks: Int16Array[]) => chunks.reduce((n, c) => n + c.length, 0);
const peak = (chunks: Int16Array[]) => chunks.reduce((m, c) => c.reduce((a, s) => Math.max(a, Math.abs(s)), m), 0);
function rms(chunks: Int16Array[]): number {
  let sum = 0;
  for (const c of chunks) for (const s of c) sum += s * s;
  return Math.sqrt(sum / Math.max(1, samples(chunks)));
}

describe('MistralTranscriber over the realtime socket', () => {
  let stream: TranscriptionStream | undefined;
  afterAll(() => stream?.close());

  it('configures the session, streams interim text and resolves the final transcript; one socket across utterances', async () => {
    voxtral.utterances.push({ text: 'Bonjour je voudrais parler de mon petit-fils' }, { text: 'Il vient dimanche' });
    stream = await transcriber().open({ contextBias: ['Mathilde', ' Mathilde ', 'Lucien', ''], signal: new AbortController().signal });
    const interims: string[] = [];
    stream.onDelta((text) => interims.push(text));
    for (const frame of toneFrames(1_200)) stream.append(frame);
    await expect(stream.flush(new AbortController().signal)).resolves.toBe('Bonjour je voudrais parler de mon petit-fils');

    const [socket] = voxtral.sockets;
    expect(socket?.model).toBe('voxtral-mini-transcribe-realtime-2602');
    expect(socket?.authorization).toBe(`Bearer ${KEY}`);
    // The documented settings alone: language and names are the operator's to turn on (STT_LANGUAGE, STT_CONTEXT_BIAS).
    expect(socket?.updates).toEqual([{ audio_format: { encoding: 'pcm_s16le', sample_rate: 16_000 } }]);
    expect(socket?.audioBytes).toBe(1_200 * 32);
    // Interim text arrives while audio flows, cumulative, and ends as the final transcript.
    expect(interims[0]).toBe('Bonjour');
    expect(interims.at(-1)).toBe('Bonjour je voudrais parler de mon petit-fils');

    for (const frame of toneFrames(400)) stream.append(frame);
    await expect(stream.flush(new AbortController().signal)).resolves.toBe('Il vient dimanche');
    expect(voxtral.sockets).toHaveLength(1);
    expect(voxtral.sockets[0]?.flushes).toBe(2);
  });

  it('reopens a dropped socket and replays the utterance: the senior does not repeat themselves', async () => {
    voxtral.utterances.push({ text: 'perdu', fault: 'drop' }, { text: 'Je suis fatiguée aujourd’hui' });
    // A service that takes the names (STT_CONTEXT_BIAS on): the new socket is told them again.
    expectContractViolations(isUndocumentedSetting);
    voxtral.behaviours.add('accepts-undocumented-fields');
    const s = await transcriber({ contextBias: true }).open({ contextBias: ['Mathilde'], signal: new AbortController().signal });
    for (const frame of toneFrames(600)) s.append(frame);
    await expect(s.flush(new AbortController().signal)).resolves.toBe('Je suis fatiguée aujourd’hui');
    expect(voxtral.sockets).toHaveLength(2);
    expect(voxtral.sockets[1]?.audioBytes).toBe(600 * 32);
    expect(voxtral.sockets[1]?.updates[0]?.context_bias).toEqual(['Mathilde']);

    // Dropped while idle (the service closes quiet sockets): reopened lazily by the next speech.
    voxtral.dropAll();
    await vi.waitFor(() => expect(voxtral.openSockets).toBe(0));
    voxtral.utterances.push({ text: 'Encore là' });
    for (const frame of toneFrames(200)) s.append(frame);
    await expect(s.flush(new AbortController().signal)).resolves.toBe('Encore là');
    expect(voxtral.sockets).toHaveLength(3);
    s.close();
  });

  it('a socket that delivered a transcript was healthy: the count of reopenings starts over after it', async () => {
    voxtral.utterances.push({ text: 'perdu', fault: 'drop' }, { text: 'Premier' }, { text: 'perdu aussi', fault: 'drop' }, { text: 'Second' });
    // One reopening allowed without a healthy socket: a count carried over the transcript would end the stream at the second drop.
    const s = await transcriber({ maxReconnects: 1 }).open({ contextBias: [], signal: new AbortController().signal });
    for (const frame of toneFrames(200)) s.append(frame);
    await expect(s.flush(new AbortController().signal)).resolves.toBe('Premier');
    for (const frame of toneFrames(200)) s.append(frame);
    await expect(s.flush(new AbortController().signal)).resolves.toBe('Second');
    expect(voxtral.sockets).toHaveLength(3);
    s.close();
  });

  it('a flush whose socket dropped and whose next one could not be dialled within its bound fails at once as unavailable, not as late', async () => {
    voxtral.utterances.push({ text: 'perdu', fault: 'drop' });
    const s = await transcriber({ backoffMs: 60_000, maxBackoffMs: 60_000, flushTimeoutMs: 10_000 }).open({ contextBias: [], signal: new AbortController().signal });
    for (const frame of toneFrames(200)) s.append(frame);
    await expect(s.flush(new AbortController().signal)).rejects.toThrow(new TranscriberUnavailableError('transcription socket lost: no new socket within the flush bound'));
    expect(voxtral.sockets).toHaveLength(1);
    s.close();
  });

  it('bounds a flush that is never answered, by its signal and by its own bound, then carries on with a fresh socket', async () => {
    voxtral.utterances.push({ text: 'jamais', fault: 'hang' }, { text: 'jamais non plus', fault: 'hang' }, { text: 'Me revoilà' });
    // The bounds alone: no socket is ended or replayed before them (test/integration/voice-transcription-behaviours.test.ts).
    const s = await transcriber({ flushTimeoutMs: 150, flushAnswerMs: 10_000 }).open({ contextBias: [], signal: new AbortController().signal });
    for (const frame of toneFrames(200)) s.append(frame);
    const budget = new AbortController();
    const flushed = s.flush(budget.signal);
    await vi.waitFor(() => expect(voxtral.sockets[0]?.flushes).toBe(1));
    budget.abort(new Error('STT_BUDGET_MS'));
    await expect(flushed).rejects.toThrow('STT_BUDGET_MS');
    // The socket that owes a transcript is retired: a late answer cannot be taken for the next utterance's.
    await vi.waitFor(() => expect(voxtral.sockets[0]?.closed).toBe(true));

    for (const frame of toneFrames(200)) s.append(frame);
    await expect(s.flush(new AbortController().signal)).rejects.toBeInstanceOf(TranscriptionTimeoutError);

    for (const frame of toneFrames(200)) s.append(frame);
    await expect(s.flush(new AbortController().signal)).resolves.toBe('Me revoilà');
    s.close();
  });

  it('rejects the flush on a service error event', async () => {
    voxtral.utterances.push({ text: 'x', fault: 'error' });
    const s = await transcriber().open({ contextBias: [], signal: new AbortController().signal });
    for (const frame of toneFrames(200)) s.append(frame);
    await expect(s.flush(new AbortController().signal)).rejects.toThrow(/transcription failed: transcription failed \(code 5000\)/);
    s.close();
  });

  it('gives up after its bounded attempts when the service refuses connections', async () => {
    voxtral.refuseConnections = 10;
    const opening = transcriber({ connectAttempts: 3 }).open({ contextBias: [], signal: new AbortController().signal });
    await expect(opening).rejects.toBeInstanceOf(TranscriberUnavailableError);
    expect(voxtral.refused).toBe(3);
  });

  it('refuses a base URL outside INV-T02 at construction, before any connection', () => {
    const build = (baseUrl: string, env: 'test' | 'production') => () => new MistralTranscriber({ apiKey: KEY, baseUrl, env });
    expect(build('https://eu.api.mistral.ai.evil.example/v1', 'test')).toThrow(InvalidMistralBaseUrlError);
    expect(build('http://api.mistral.ai/v1', 'production')).toThrow(InvalidMistralBaseUrlError);
    expect(build(mistral.baseUrl, 'production')).toThrow(InvalidMistralBaseUrlError);
    expect(build(mistral.baseUrl.replace(/\/v1$/, ''), 'test')).toThrow(/must end in \/v1/);
    expect(() => new MistralSpeaker({ apiKey: KEY, baseUrl: 'https://speech.example.com/v1', env: 'test' })).toThrow(InvalidMistralBaseUrlError);
    expect(build('https://api.mistral.ai/v1', 'production')).not.toThrow();
    expect(voxtral.sockets).toHaveLength(0);
  });
});

describe('MistralSpeaker over the speech endpoint', () => {
  const speaker = () => new MistralSpeaker({ apiKey: KEY, baseUrl: mistral.baseUrl, env: 'test' });

  it('streams float32 24 kHz PCM as s16, sample for sample', async () => {
    const text = 'Bonjour Mathilde, ravi de vous revoir.';
    const chunks = await collect(speaker().synthesize(text, new AbortController().signal));
    expect(chunks.length).toBeGreaterThan(1);
    const expected = float32ToS16(fakeSpeechPcm(text, 'tone'));
    const got = new Int16Array(samples(chunks));
    let at = 0;
    for (const c of chunks) {
      got.set(c, at);
      at += c.length;
    }
    expect(got).toEqual(expected);
    expect((got.length / 24_000) * 1000).toBeCloseTo(fakeSpeechDurationMs(text), 0);
    expect(peak(chunks)).toBe(16_384);
    const [request] = voxtral.speechRequests;
    expect(request?.body).toMatchObject({ model: 'voxtral-mini-tts-2603', voice_id: 'fr_marie_neutral', input: text, response_format: 'pcm', stream: true });
    expect(request?.authorization).toBe(`Bearer ${KEY}`);
  });

  it('aborts its request when the signal aborts: the server sees the connection close', async () => {
    voxtral.speechDeltaIntervalMs = 20;
    const controller = new AbortController();
    const chunks: Int16Array[] = [];
    for await (const chunk of speaker().synthesize('Une longue phrase que personne ne va écouter jusqu’au bout, hélas.', controller.signal)) {
      chunks.push(chunk);
      controller.abort();
    }
    expect(chunks).toHaveLength(1);
    await vi.waitFor(() => expect(voxtral.speechRequests[0]?.closedEarly).toBe(true));
  });

  it('bounds the service’s silence only: a consumer pausing longer than the stall bound loses nothing', async () => {
    const text = 'Bonjour Mathilde, ravi de vous revoir.';
    vi.useFakeTimers({ toFake: ['setTimeout', 'clearTimeout'] });
    try {
      const chunks: Int16Array[] = [];
      for await (const chunk of new MistralSpeaker({ apiKey: KEY, baseUrl: mistral.baseUrl, env: 'test', stallMs: 100 }).synthesize(text, new AbortController().signal)) {
        chunks.push(chunk);
        // A slow kiosk: ReplyAudio holds the generator here while the socket drains (up to 10 s).
        await vi.advanceTimersByTimeAsync(1_000);
      }
      expect(samples(chunks)).toBe(fakeSpeechPcm(text, 'tone').length);
      expect(voxtral.speechRequests[0]?.completed).toBe(true);
    } finally {
      vi.useRealTimers();
    }
  });

  it('fails a service that stays silent past the stall bound, first audio or between deltas, and closes the request', async () => {
    vi.useFakeTimers({ toFake: ['setTimeout', 'clearTimeout'] });
    try {
      const quiet = new MistralSpeaker({ apiKey: KEY, baseUrl: mistral.baseUrl, env: 'test', stallMs: 100 });
      voxtral.speechStatus = 'hang';
      const never = collect(quiet.synthesize('Bonjour.', new AbortController().signal));
      const neverFailed = expect(never).rejects.toThrow(/no speech audio for 100 ms/);
      await vi.advanceTimersByTimeAsync(100);
      await neverFailed;

      // Deltas 500 ms apart on the service's side (the fake's clock is this test's): the consumer asks at once.
      voxtral.speechStatus = 200;
      voxtral.speechDeltaIntervalMs = 500;
      const chunks: Int16Array[] = [];
      const slow = (async () => {
        for await (const chunk of quiet.synthesize('Une phrase qui traîne.', new AbortController().signal)) chunks.push(chunk);
      })();
      const slowFailed = expect(slow).rejects.toThrow(/no speech audio for 100 ms/);
      await until(() => chunks.length === 1);
      await vi.advanceTimersByTimeAsync(100);
      await slowFailed;
      expect(chunks).toHaveLength(1);
      await vi.waitFor(() => expect(voxtral.speechRequests[1]?.closedEarly).toBe(true));
    } finally {
      vi.useRealTimers();
    }
  });

  it('fails with SpeechServiceError on a 5xx, without retrying', async () => {
    voxtral.speechStatus = 503;
    await expect(collect(speaker().synthesize('Bonjour.', new AbortController().signal))).rejects.toBeInstanceOf(SpeechServiceError);
    expect(voxtral.speechRequests).toHaveLength(1);
  });

  it('the fake also answers non-streamed requests in Mistral’s JSON shape', async () => {
    const client = new Mistral({ apiKey: KEY, serverURL: mistral.baseUrl.replace(/\/v1$/, '') });
    const res = await client.audio.speech.complete({ model: 'voxtral-mini-tts-2603', input: 'Oui.', voiceId: 'fr_marie_neutral', responseFormat: 'pcm' });
    expect('audioData' in res && Buffer.from(res.audioData, 'base64').length).toBe(fakeSpeechPcm('Oui.', 'tone').byteLength);
  });
});

describe('espeak-ng offline speaker', () => {
  it('speaks French: non-silent, at 22,050 Hz, with a sensible duration', async () => {
    const espeak = new EspeakSpeaker();
    expect(espeak.sampleRate).toBe(ESPEAK_SAMPLE_RATE);
    const chunks = await collect(espeak.synthesize('Bonjour, je suis là pour discuter avec vous.', new AbortController().signal));
    const seconds = samples(chunks) / ESPEAK_SAMPLE_RATE;
    // Nine words at 150 words a minute, with espeak's pauses: between 2 and 5 seconds.
    expect(seconds).toBeGreaterThan(2);
    expect(seconds).toBeLessThan(5);
    expect(rms(chunks)).toBeGreaterThan(500);
  });

  it('stops at once when aborted', async () => {
    const controller = new AbortController();
    controller.abort();
    expect(await collect(new EspeakSpeaker().synthesize('Bonjour.', controller.signal))).toEqual([]);
  });

  it(`replaces a worker that holds a sentence ${SPEECH_WORKER_STUCK_MS} ms without a word; the sentence queued behind it is spoken by the new one`, async () => {
    const espeak = new EspeakSpeaker();
    await collect(espeak.synthesize('Bonjour.', new AbortController().signal)); // the worker is loaded
    vi.useFakeTimers({ toFake: ['setTimeout', 'clearTimeout'] });
    try {
      const heard: Int16Array[] = [];
      const long = (async () => {
        const text = 'Je vous raconte une longue histoire, avec des détours et des souvenirs de toutes sortes. '.repeat(20);
        for await (const chunk of espeak.synthesize(text, new AbortController().signal)) heard.push(chunk);
      })();
      const longFailed = expect(long).rejects.toThrow(`stuck: no audio for ${SPEECH_WORKER_STUCK_MS} ms`);
      const queued = collect(espeak.synthesize('Je suis toujours là.', new AbortController().signal));
      await until(() => heard.length > 0);
      // The clock jumps in one synchronous step: no word from the worker can come in between.
      vi.advanceTimersByTime(SPEECH_WORKER_STUCK_MS);
      await longFailed;
      const after = await queued;
      expect(rms(after)).toBeGreaterThan(500);
      expect(samples(after) / ESPEAK_SAMPLE_RATE).toBeGreaterThan(0.5);
    } finally {
      vi.useRealTimers();
    }
    expect(rms(await collect(espeak.synthesize('Et encore là.', new AbortController().signal)))).toBeGreaterThan(500);
  });
});

describe('FallbackSpeaker', () => {
  const errors: Error[] = [];
  const fallback = (firstAudioMs?: number) =>
    new FallbackSpeaker({
      primary: new MistralSpeaker({ apiKey: KEY, baseUrl: mistral.baseUrl, env: 'test' }),
      fallback: new EspeakSpeaker(),
      onSpeechError: (err) => errors.push(err),
      ...(firstAudioMs ? { firstAudioMs } : {}),
    });
  beforeEach(() => void (errors.length = 0));

  it('speaks with Mistral when it answers', async () => {
    const chunks = await collect(fallback().synthesize('Oui.', new AbortController().signal));
    expect(samples(chunks)).toBe(fakeSpeechPcm('Oui.', 'tone').length);
    expect(errors).toEqual([]);
  });

  it('falls back to espeak on a 503, at the primary’s rate, and counts the error', async () => {
    voxtral.speechStatus = 503;
    const speaker = fallback();
    expect(speaker.sampleRate).toBe(24_000);
    const chunks = await collect(speaker.synthesize('Bien sûr, je vous écoute.', new AbortController().signal));
    expect(rms(chunks)).toBeGreaterThan(500);
    expect(samples(chunks) / 24_000).toBeGreaterThan(1);
    expect(errors).toHaveLength(1);
    expect(errors[0]).toBeInstanceOf(SpeechServiceError);
  });

  it('falls back when the service stays silent past the first-audio bound, closing the silent request', async () => {
    voxtral.speechStatus = 'hang';
    const chunks = await collect(fallback(150).synthesize('Je vous écoute.', new AbortController().signal));
    expect(rms(chunks)).toBeGreaterThan(500);
    expect(errors.map((e) => e.name)).toEqual(['NoSpeechError']);
    await vi.waitFor(() => expect(voxtral.speechRequests[0]?.closedEarly).toBe(true));
  });
});

describe('LineCache', () => {
  const variations = loadCacheVariations();
  const profile = { preferredName: 'Mathilde', isFreshSenior: false };
  const lines = sessionLines(variations, profile);
  const mistralSpeaker = () => new MistralSpeaker({ apiKey: KEY, baseUrl: mistral.baseUrl, env: 'test' });

  it('lists the SOS lines, the neutral line and every greeting as this senior hears it', () => {
    expect(lines.always).toEqual([variations.sos_fallback, variations.sos_after_partial]);
    expect(lines.shared).toEqual([NEUTRAL_REPLY]);
    expect(lines.personal).toContain('Bonjour Mathilde, ravi de vous revoir.');
    expect(lines.personal).toHaveLength(variations.greeting.length);
  });

  it('renders every line at the speaker’s rate, and shares the common ones between sessions', async () => {
    const shared = new SharedLines();
    const cache = new LineCache({ speaker: mistralSpeaker(), lastResort: new EspeakSpeaker(), lines, shared, seniorId: 'mathilde' });
    await cache.warm();
    for (const text of [...lines.always, ...lines.shared, ...lines.personal]) {
      expect(samples(cache.get(text)!)).toBe(fakeSpeechPcm(text, 'tone').length);
    }
    expect(voxtral.speechRequests).toHaveLength(3 + lines.personal.length);

    const other = sessionLines(variations, { preferredName: 'Lucien', isFreshSenior: false });
    const second = new LineCache({ speaker: mistralSpeaker(), lastResort: new EspeakSpeaker(), lines: other, shared, seniorId: 'lucien' });
    await second.warm();
    // Only Lucien's greetings were synthesized again.
    expect(voxtral.speechRequests).toHaveLength(3 + lines.personal.length + other.personal.length);
    cache.close();
    expect(cache.get(lines.personal[0]!)).toBeUndefined();
    second.close();
  });

  it('sessions warming up together ask once for each common line, and each gets it', async () => {
    voxtral.speechLatencyMs = 50;
    const shared = new SharedLines();
    const seniors = ['Mathilde', 'Lucien', 'Odette'].map((preferredName) => sessionLines(variations, { preferredName, isFreshSenior: false }));
    const caches = seniors.map((l, i) => new LineCache({ speaker: mistralSpeaker(), lastResort: new EspeakSpeaker(), lines: l, shared, seniorId: `senior-${i}` }));
    await Promise.all(caches.map((c) => c.warm()));
    const common = [...lines.always, ...lines.shared];
    for (const text of common) {
      expect(voxtral.speechRequests.filter((r) => r.body.input === text)).toHaveLength(1);
      for (const cache of caches) expect(samples(cache.get(text)!)).toBe(fakeSpeechPcm(text, 'tone').length);
    }
    expect(voxtral.speechRequests).toHaveLength(common.length + seniors.reduce((n, l) => n + l.personal.length, 0));
    for (const cache of caches) cache.close();
  });

  it('has the SOS audio even with the speech service down, rendered offline at the speaker’s rate', async () => {
    voxtral.speechStatus = 503;
    const speaker = mistralSpeaker();
    const cache = new LineCache({ speaker, lastResort: new EspeakSpeaker(), lines, shared: new SharedLines(), seniorId: 'mathilde' });
    await cache.warm();
    for (const text of lines.always) {
      const pcm = cache.get(text)!;
      expect(rms(pcm)).toBeGreaterThan(500);
      expect(samples(pcm) / speaker.sampleRate).toBeGreaterThan(1);
    }
    expect(cache.get(NEUTRAL_REPLY)).toBeUndefined();
    expect(cache.get(lines.personal[0]!)).toBeUndefined();
    cache.close();
  });

  it('an outage at warm-up: SOS stand-ins in espeak’s voice, the resting service asked once; replaced by the speaker’s voice once it answers', async () => {
    voxtral.speechStatus = 503;
    const mistralLength = (text: string) => fakeSpeechPcm(text, 'tone').length;
    const inMistralVoice = (cache: LineCache, text: string) => cache.get(text)?.[0]?.length === mistralLength(text);
    vi.useFakeTimers({ toFake: ['setTimeout', 'clearTimeout', 'performance'] });
    try {
      const shared = new SharedLines();
      const open = (l: typeof lines, seniorId: string) => new LineCache({ speaker: mistralSpeaker(), lastResort: new EspeakSpeaker(), lines: l, shared, seniorId });
      const cache = open(lines, 'mathilde');
      await cache.warm();
      const other = open(sessionLines(variations, { preferredName: 'Lucien', isFreshSenior: false }), 'lucien');
      await other.warm();
      // One failed request: then the service rests, for this session's next lines and the next session's.
      expect(voxtral.speechRequests).toHaveLength(1);
      for (const c of [cache, other]) {
        for (const text of lines.always) {
          expect(rms(c.get(text)!)).toBeGreaterThan(500);
          expect(inMistralVoice(c, text)).toBe(false);
        }
        expect(c.get(NEUTRAL_REPLY)).toBeUndefined();
      }

      voxtral.speechStatus = 200;
      await vi.advanceTimersByTimeAsync(shared.retryMs);
      const everyLine = (c: LineCache, l: typeof lines) => [...l.always, ...l.shared, ...l.personal].every((text) => inMistralVoice(c, text));
      await until(() => everyLine(cache, lines) && everyLine(other, sessionLines(variations, { preferredName: 'Lucien', isFreshSenior: false })));
      // Each common line was asked once for both sessions (the first SOS line also failed once); nothing more once every line is in the speaker's voice.
      for (const text of [...lines.always, ...lines.shared]) expect(voxtral.speechRequests.filter((r) => r.body.input === text)).toHaveLength(text === lines.always[0] ? 2 : 1);
      const asked = voxtral.speechRequests.length;
      await vi.advanceTimersByTimeAsync(shared.retryMs * 2);
      expect(voxtral.speechRequests).toHaveLength(asked);
      cache.close();
      other.close();
    } finally {
      vi.useRealTimers();
    }
  });

  it('the runtime’s wiring keeps the lines in Mistral’s voice: an SOS line spoken by the offline voice during an outage is Mistral’s again after it', async () => {
    voxtral.speechStatus = 503;
    const config = loadConfig({ KOHAMI_ENV: 'test', MISTRAL_API_KEY: KEY, MISTRAL_BASE_URL: mistral.baseUrl });
    const pool = new pg.Pool({ max: 1 }); // never connected: lines need no database
    const services = await createVoiceServices(config, { pool, consents: new PgConsentAdapter(pool), variations, metrics: createMetrics(), logger: pino({ level: 'silent' }) });
    const { actor } = startSession(streamingModel(['Oui.']));
    const live: LiveSession = { sessionId: 's-lines', seniorId: 'senior-1', actor, link: null, connectedSince: Date.now() };
    const sos = sessionLines(variations, actor.getSnapshot().context.profile).always;
    vi.useFakeTimers({ toFake: ['setTimeout', 'clearTimeout', 'performance'] });
    try {
      const session = services.linesFor(live, 24_000);
      await until(() => sos.every((text) => session.get(text)));
      for (const text of sos) expect(session.get(text)![0]!.length).not.toBe(fakeSpeechPcm(text, 'tone').length);

      voxtral.speechStatus = 200;
      await vi.advanceTimersByTimeAsync(LINE_RETRY_MS);
      await until(() => sos.every((text) => session.get(text)![0]!.length === fakeSpeechPcm(text, 'tone').length));
      // And a session opened now gets them at once, from the process's copy.
      const next = services.linesFor(live, 24_000);
      for (const text of sos) expect(next.get(text)![0]).toBe(session.get(text)![0]);
      session.close();
      next.close();
    } finally {
      vi.useRealTimers();
      actor.stop();
      await pool.end();
    }
  });

  it('voice starts of one senior ask for their greetings once: kept after each session, asked again only once the senior is erased', async () => {
    const config = loadConfig({ KOHAMI_ENV: 'test', MISTRAL_API_KEY: KEY, MISTRAL_BASE_URL: mistral.baseUrl });
    const pool = new pg.Pool({ max: 1 }); // never connected: lines need no database
    const services = await createVoiceServices(config, { pool, consents: new PgConsentAdapter(pool), variations, metrics: createMetrics(), logger: pino({ level: 'silent' }) });
    const { actor } = startSession(streamingModel(['Oui.']));
    const live: LiveSession = { sessionId: 's-greetings', seniorId: 'senior-1', actor, link: null, connectedSince: Date.now() };
    const { personal } = sessionLines(variations, actor.getSnapshot().context.profile);
    const greetingRequests = () => voxtral.speechRequests.filter((r) => personal.includes(r.body.input as string)).length;
    const STARTS = 10;
    try {
      for (let i = 0; i < STARTS; i++) {
        // One kiosk's session after the other, as a senior's day goes: never two at once.
        const lines = services.linesFor(live, 24_000);
        await until(() => personal.every((text) => lines.get(text)));
        lines.close();
      }
      expect(personal.length).toBeGreaterThan(0);
      expect(greetingRequests()).toBe(personal.length);

      // Erased (the runtime's SeniorErasure calls this): the kept audio goes, a later session renders it again.
      expect(services.invalidateSenior('senior-1')).toBe(personal.length);
      const after = services.linesFor(live, 24_000);
      await until(() => personal.every((text) => after.get(text)));
      expect(greetingRequests()).toBe(2 * personal.length);
      after.close();
    } finally {
      actor.stop();
      await pool.end();
    }
  });

  it('never writes audio to disk: no voice adapter can reach a file-writing API', () => {
    const files = [
      'runtime/voice/line-cache.ts',
      'adapters/voice/mistral-speaker.ts',
      'adapters/voice/espeak-speaker.ts',
      'adapters/voice/pico-speaker.ts',
      'adapters/voice/speech-worker.ts',
      'runtime/voice/offline-speaker.ts',
      'runtime/voice/fallback-speaker.ts',
      'adapters/voice/mistral-transcriber.ts',
      'machines/voice/resample.ts',
      'machines/voice/sinc-resampler.js',
    ];
    for (const file of files) {
      const source = readFileSync(new URL(`../../${file}`, import.meta.url), 'utf8');
      expect(source, file).not.toMatch(/from 'node:fs|from 'fs|writeFile|createWriteStream|appendFile|mkdtemp|tmpdir/);
    }
  });
});
