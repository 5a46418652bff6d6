import { Mistral } from '@mistralai/mistralai';
import { ValidationError$inboundSchema, VoiceListResponse$inboundSchema } from '@mistralai/mistralai/models/components';
import { HTTPValidationError } from '@mistralai/mistralai/models/errors';
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it, vi } from 'vitest';
import { z } from 'zod';
import { EspeakSpeaker } from '../../adapters/voice/espeak-speaker.ts';
import { MistralSpeaker, OPUS_FIRST_PACKET_MS, SpeechServiceError, UNKNOWN_VOICE_PAUSE_MS, VOICE_CHECK_MS, type MistralSpeakerOptions } from '../../adapters/voice/mistral-speaker.ts';
import { MAX_THROTTLE_PAUSE_MS } from '../../adapters/mistral/retry-after.ts';
import type { SpeechPiece } from '../../machines/voice/voice.port.ts';
import { createLogger } from '../../runtime/logger.ts';
import { FallbackSpeaker } from '../../runtime/voice/fallback-speaker.ts';
import { expectContractViolations } from '../support/contract-violations.ts';
import { fakeSpeechPackets, fakeSpeechPcm, FakeVoxtral } from '../support/fake-voxtral.ts';
import { FAKE_VOICES, SLOW_FIRST_PACKET_MS } from '../support/fake-voxtral-speech.ts';
import { LogCapture } from '../support/runtime.ts';

/**
 * MistralSpeaker, behind the fallback speaker as the runtime builds it, against the Voxtral fake in
 * each speech behaviour it plays (test/support/service-behaviours.ts), over real HTTP.
 */
let voxtral: FakeVoxtral;
let logs: LogCapture;
const FIRST = 'Il fait beau aujourd’hui, Marie.';
const SECOND = 'Voulez-vous sortir un peu ?';
/** The fallback speaker's own bound on the first audio (its default, as the runtime uses it). */
const FALLBACK_FIRST_AUDIO_MS = 1_500;

beforeAll(async () => {
  voxtral = await new FakeVoxtral().start();
});
afterAll(() => voxtral.stop());
beforeEach(() => {
  logs = new LogCapture();
  voxtral.behaviours.clear();
  voxtral.speechRequests.length = 0;
  voxtral.voicesRequests.length = 0;
  voxtral.voices = [...FAKE_VOICES];
  voxtral.voicesStatus = 200;
  voxtral.rateLimitRetryAfter = '1';
});
afterEach(() => {
  vi.useRealTimers();
});

const speaker = (options: Partial<MistralSpeakerOptions> = {}) => new MistralSpeaker({ apiKey: 'test-key', baseUrl: voxtral.baseUrl, env: 'test', logger: createLogger('debug', logs), ...options });
const withFallback = (primary: MistralSpeaker, firstAudioMs = FALLBACK_FIRST_AUDIO_MS) => new FallbackSpeaker({ primary, fallback: new EspeakSpeaker(), firstAudioMs });
const formats = () => voxtral.speechRequests.map((r) => r.body.response_format);
const statuses = () => voxtral.speechRequests.map((r) => r.status);

async function collect<T>(iterable: AsyncIterable<T>): Promise<T[]> {
  const pieces: T[] = [];
  for await (const piece of iterable) pieces.push(piece);
  return pieces;
}
const opus = (s: { synthesizeOpus?: (text: string, signal: AbortSignal) => AsyncIterable<SpeechPiece> }, text: string) => collect(s.synthesizeOpus!(text, new AbortController().signal));
const pcm = (s: { synthesize: (text: string, signal: AbortSignal) => AsyncIterable<Int16Array> }, text: string) => collect(s.synthesize(text, new AbortController().signal));
const samples = (pieces: SpeechPiece[]) => pieces.reduce((n, p) => n + (p instanceof Int16Array ? p.length : 0), 0);
/** Voxtral's own PCM for `text` (the fake's tone, 24 kHz): what the senior hears when the service spoke, not espeak-ng. */
const voxtralSamples = (text: string) => fakeSpeechPcm(text, 'tone').length;

/**
 * Lets sockets, workers and promises run until `check` holds, for at most 10 s of wall-clock time
 * (performance.now and setImmediate are never faked here; timers and Date may be).
 */
async function until(check: () => boolean): Promise<void> {
  const deadline = performance.now() + 10_000;
  while (!check() && performance.now() < deadline) await new Promise((resolve) => setImmediate(resolve));
  expect(check()).toBe(true);
}

describe('the speech fake answers in the SDK’s schemas', () => {
  const client = () => new Mistral({ apiKey: 'test-key', serverURL: voxtral.baseUrl.replace(/\/v1$/, '') });

  it('lists its voices as the SDK’s VoiceListResponse, in the pages the SDK asks for', async () => {
    // Given a request, the SDK sends every parameter, its defaults filled in; given none, none.
    const list = await client().audio.voices.list({});
    expect(list.items.map((v) => v.slug)).toEqual(['fr_marie_neutral', 'fr_marie_happy', 'en_paul_neutral']);
    expect(voxtral.voicesRequests[0]?.query).toEqual({ limit: '10', offset: '0', type: 'all' });
    await client().audio.voices.list();
    expect(voxtral.voicesRequests[1]?.query).toEqual({});
    const raw = await fetch(`${voxtral.baseUrl}/audio/voices?limit=2&offset=2`);
    expect(VoiceListResponse$inboundSchema.parse(await raw.json())).toMatchObject({ items: [{ slug: 'en_paul_neutral' }], total: 3, pageSize: 2 });
  });

  it('refuses a request with a field the SDK’s schema lacks with a 422 the SDK reads, as Mistral does', async () => {
    const broken = expectContractViolations();
    // The SDK's SpeechRequest passes unknown fields through: the fake is the one to refuse them.
    const refused: unknown = await client()
      .audio.speech.complete({ input: 'Oui.', voiceId: 'fr_marie_neutral', responseFormat: 'pcm', language: 'fr' })
      .catch((err: unknown) => err);
    expect(refused).toBeInstanceOf(HTTPValidationError);
    expect((refused as HTTPValidationError).detail).toEqual([expect.objectContaining({ loc: ['body', 'language'], type: 'extra_forbidden' })]);
    const voices = await fetch(`${voxtral.baseUrl}/audio/voices?limit=10&page=2`);
    expect(voices.status).toBe(422);
    const { detail } = (await voices.json()) as { detail: unknown };
    expect(z.array(ValidationError$inboundSchema).parse(detail)).toEqual([expect.objectContaining({ loc: ['query', 'page'] })]);
    expect(broken.map((v) => `${v.endpoint} ${v.path.join('.')}`)).toEqual(['POST /v1/audio/speech language', 'GET /v1/audio/voices page']);
  });

  it('rate-limited: the first speech and the first voices call after it is switched on get a 429 with Retry-After: 1, the later ones are served; again when switched on again', async () => {
    voxtral.behaviours.add('rate-limited');
    const call = async () => (await fetch(`${voxtral.baseUrl}/audio/voices`)).status;
    const first = await fetch(`${voxtral.baseUrl}/audio/voices`);
    expect(first.status).toBe(429);
    expect(first.headers.get('retry-after')).toBe('1');
    expect(await first.json()).toMatchObject({ object: 'error', type: 'rate_limited' });
    expect(await call()).toBe(200);
    voxtral.behaviours.delete('rate-limited');
    voxtral.behaviours.add('rate-limited');
    expect([await call(), await call()]).toEqual([429, 200]);
  });
});

describe('MistralSpeaker under each speech behaviour', () => {
  it('speech-raw-opus: raw Opus packets, one a delta, are sniffed as such and relayed byte for byte, each packet’s duration read from its TOC', async () => {
    voxtral.behaviours.add('speech-raw-opus');
    const pieces = await opus(withFallback(speaker()), FIRST);
    expect(pieces).toEqual(fakeSpeechPackets(FIRST, 'tone').map((packet) => ({ packet, durationMs: 20 })));
    expect(formats()).toEqual(['opus']);
  });

  it('speech-slow-first-packet: the sentence goes to the fallback at its bound, and the next sentences are asked as PCM', async () => {
    vi.useFakeTimers({ toFake: ['setTimeout', 'clearTimeout'] });
    voxtral.behaviours.add('speech-slow-first-packet');
    const fallback = withFallback(speaker());
    const first = opus(fallback, FIRST);
    await until(() => voxtral.speechRequests.length === 1);
    await vi.advanceTimersByTimeAsync(FALLBACK_FIRST_AUDIO_MS);
    // Not lost: espeak-ng spoke it (PCM at the primary's rate), while the Opus request was given up.
    const heard = await first;
    expect(heard.every((p) => p instanceof Int16Array)).toBe(true);
    expect(samples(heard)).toBeGreaterThan(0);
    await until(() => voxtral.speechRequests[0]!.closedEarly);
    expect(logs.text).toContain(`its first Opus packet took over ${OPUS_FIRST_PACKET_MS} ms`);

    const next = await opus(fallback, SECOND);
    expect(formats()).toEqual(['opus', 'pcm']);
    expect(samples(next)).toBe(voxtralSamples(SECOND));
  });

  it('speech-slow-first-packet, the fallback waiting longer: this sentence is still heard in Voxtral’s Opus, the next is asked as PCM', async () => {
    vi.useFakeTimers({ toFake: ['setTimeout', 'clearTimeout'] });
    voxtral.behaviours.add('speech-slow-first-packet');
    const fallback = withFallback(speaker(), SLOW_FIRST_PACKET_MS + 1_000);
    const first = opus(fallback, FIRST);
    await until(() => voxtral.speechRequests.length === 1);
    await vi.advanceTimersByTimeAsync(SLOW_FIRST_PACKET_MS);
    expect(await first).toEqual(fakeSpeechPackets(FIRST, 'tone').map((packet) => ({ packet, durationMs: 20 })));
    await opus(fallback, SECOND);
    expect(formats()).toEqual(['opus', 'pcm']);
  });

  it('unknown-voice: the 404 is told in the log (the voice, not the sentence), the next sentences cost no request until the pause is over, then the service is asked again', async () => {
    vi.useFakeTimers({ toFake: ['setTimeout', 'clearTimeout', 'Date'] });
    voxtral.behaviours.add('unknown-voice');
    const fallback = withFallback(speaker());
    expect(samples(await pcm(fallback, FIRST))).toBeGreaterThan(0);
    expect(statuses()).toEqual([404]);
    const told = logs.lines.map((l) => JSON.parse(l) as Record<string, unknown>).filter((l) => l.status === 404);
    expect(told).toEqual([expect.objectContaining({ level: 50, voice: 'fr_marie_neutral', model: 'voxtral-mini-tts-2603' })]);
    expect(logs.text).not.toContain('Marie.');

    // Spoken by espeak-ng at once: no request, no wait.
    expect(samples(await pcm(fallback, SECOND))).toBeGreaterThan(0);
    expect(statuses()).toEqual([404]);

    await vi.advanceTimersByTimeAsync(UNKNOWN_VOICE_PAUSE_MS);
    voxtral.behaviours.delete('unknown-voice');
    expect(samples(await pcm(fallback, SECOND))).toBe(voxtralSamples(SECOND));
    expect(statuses()).toEqual([404, 200]);
  });

  it('rate-limited: the sentence is spoken by the fallback at once, the SDK does not retry, and no request leaves until the Retry-After has passed', async () => {
    vi.useFakeTimers({ toFake: ['setTimeout', 'clearTimeout', 'Date'] });
    voxtral.behaviours.add('rate-limited');
    const primary = speaker();
    const fallback = withFallback(primary);
    // No timer advanced: the senior hears espeak-ng without waiting for the Retry-After.
    expect(samples(await opus(fallback, FIRST))).toBeGreaterThan(0);
    expect(statuses()).toEqual([429]);
    await expect(pcm(primary, SECOND)).rejects.toThrow(SpeechServiceError);
    expect(samples(await opus(fallback, SECOND))).toBeGreaterThan(0);
    expect(statuses()).toEqual([429]);
    expect(logs.text).toContain('"pauseMs":1000');

    await vi.advanceTimersByTimeAsync(1_000);
    const resumed = await opus(fallback, SECOND);
    expect(statuses()).toEqual([429, 200]);
    // Back to Voxtral's Opus: a 429 is no reason to give Opus up.
    expect(formats()).toEqual(['opus', 'opus']);
    expect(resumed.every((p) => !(p instanceof Int16Array))).toBe(true);
  });

  it('a Retry-After over a minute is capped at a minute', async () => {
    vi.useFakeTimers({ toFake: ['setTimeout', 'clearTimeout', 'Date'] });
    voxtral.behaviours.add('rate-limited');
    voxtral.rateLimitRetryAfter = '3600';
    const primary = speaker();
    await expect(pcm(primary, FIRST)).rejects.toThrow(SpeechServiceError);
    await vi.advanceTimersByTimeAsync(MAX_THROTTLE_PAUSE_MS - 1);
    await expect(pcm(primary, FIRST)).rejects.toThrow(/not asked for 1 ms more: told to wait \(HTTP 429\)/);
    await vi.advanceTimersByTimeAsync(1);
    expect(samples(await pcm(primary, FIRST))).toBe(voxtralSamples(FIRST));
    expect(statuses()).toEqual([429, 200]);
  });
});

describe('the voice check', () => {
  it('finds the configured voice by its slug or its id, reading the list in pages of 100 until it is found or the list ends', async () => {
    voxtral.voices = Array.from({ length: 250 }, (_, i) => `fr_voix${i}_neutral`);
    await expect(speaker({ voice: 'fr_voix210_neutral' }).checkVoice()).resolves.toEqual({ kind: 'listed' });
    expect(voxtral.voicesRequests.map((r) => r.query)).toEqual([0, 100, 200].map((offset) => ({ limit: '100', offset: String(offset), type: 'all' })));
    const id = (await new Mistral({ apiKey: 'k', serverURL: voxtral.baseUrl.replace(/\/v1$/, '') }).audio.voices.list({ limit: 1 })).items[0]!.id;
    await expect(speaker({ voice: id }).checkVoice()).resolves.toEqual({ kind: 'listed' });
  });

  it('unknown-voice: names the voices the service lists', async () => {
    voxtral.behaviours.add('unknown-voice');
    await expect(speaker().checkVoice()).resolves.toEqual({ kind: 'unknown', voices: ['fr_marie_happy', 'en_paul_neutral'] });
  });

  it('rate-limited: says nothing of the voice but the wait it was told, and the speaker honours the Retry-After', async () => {
    vi.useFakeTimers({ toFake: ['setTimeout', 'clearTimeout', 'Date'] });
    voxtral.behaviours.add('rate-limited');
    const primary = speaker();
    await expect(primary.checkVoice()).resolves.toEqual({ kind: 'unchecked', reason: 'HTTP 429', rateLimited: { retryAfterMs: 1000 } });
    await expect(pcm(primary, FIRST)).rejects.toThrow(/not asked for 1000 ms more: told to wait \(HTTP 429\)/);
    expect(voxtral.speechRequests).toHaveLength(0);
    voxtral.behaviours.delete('rate-limited');
    await vi.advanceTimersByTimeAsync(1_000);
    expect(samples(await pcm(primary, FIRST))).toBe(voxtralSamples(FIRST));
  });

  it('a voice list that does not come is given up at its bound; a refused connection at once', async () => {
    vi.useFakeTimers({ toFake: ['setTimeout', 'clearTimeout'] });
    voxtral.voicesStatus = 'hang';
    const check = speaker().checkVoice();
    await until(() => voxtral.voicesRequests.length === 1);
    await vi.advanceTimersByTimeAsync(VOICE_CHECK_MS);
    await expect(check).resolves.toEqual({ kind: 'unchecked', reason: `no answer within ${VOICE_CHECK_MS} ms` });
    vi.useRealTimers();

    const closed = await new FakeVoxtral().start();
    const baseUrl = closed.baseUrl;
    await closed.stop();
    await expect(speaker({ baseUrl }).checkVoice()).resolves.toMatchObject({ kind: 'unchecked' });
  });
});
