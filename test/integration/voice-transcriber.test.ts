import type pg from 'pg';
import pino from 'pino';
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { loadCacheVariations } from '../../adapters/fluxes/cache-flux.adapter.ts';
import { MistralTranscriber } from '../../adapters/voice/mistral-transcriber.ts';
import { TranscriptionTimeoutError } from '../../machines/voice/voice.port.ts';
import type { ConsentPort } from '../../machines/memory/memory.port.ts';
import { loadConfig } from '../../runtime/config.ts';
import { createMetrics } from '../../runtime/metrics.ts';
import { createVoiceServices } from '../../runtime/voice/voice-services.ts';
import { relayedVoxtral } from '../support/relayed-voxtral.ts';
import { toneFrames } from '../support/speech.ts';
import type { TcpRelay } from '../support/tcp-relay.ts';

const { voxtral, relay: relayed } = relayedVoxtral();
let relay: TcpRelay;

beforeEach(() => {
  relay = relayed();
  voxtral.utterances.length = 0;
  voxtral.sockets.length = 0;
  voxtral.transcriptionLatencyMs = 0;
});
afterEach(() => {
  vi.useRealTimers();
});

describe('the realtime socket kept alive', () => {
  it('pings an idle socket, keeps it while it answers, and replaces it before the next sentence once it stops answering', async () => {
    // Only the keep-alive's interval is simulated: sockets, connection timeouts and backoff run for real.
    vi.useFakeTimers({ toFake: ['setInterval', 'clearInterval'] });
    const KEEP_ALIVE_MS = 10_000;
    voxtral.utterances.push({ text: 'Bonjour' }, { text: 'Je suis encore là' });
    const sockets = { opened: 0, closed: 0 };
    const counter = { opened: () => sockets.opened++, closed: () => sockets.closed++ };
    const stream = await new MistralTranscriber({ apiKey: 'test-key', baseUrl: relay.url, env: 'test', backoffMs: 10, flushTimeoutMs: 1000, keepAliveMs: KEEP_ALIVE_MS, sockets: counter }).open({
      contextBias: [],
      signal: new AbortController().signal,
    });
    for (const frame of toneFrames(200)) stream.append(frame);
    await expect(stream.flush(new AbortController().signal)).resolves.toBe('Bonjour');

    // Idle and healthy: each ping is answered, the socket stays.
    for (let i = 0; i < 3; i++) {
      const before = relay.downBytes;
      vi.advanceTimersByTime(KEEP_ALIVE_MS);
      await vi.waitFor(() => expect(relay.downBytes).toBeGreaterThan(before));
    }
    expect(voxtral.sockets).toHaveLength(1);
    expect(sockets).toEqual({ opened: 1, closed: 0 });

    // The network path dies silently: the ping goes unanswered, and at the next one the socket is replaced.
    relay.freeze();
    vi.advanceTimersByTime(KEEP_ALIVE_MS);
    vi.advanceTimersByTime(KEEP_ALIVE_MS);
    await vi.waitFor(() => expect(voxtral.sockets).toHaveLength(2));
    await vi.waitFor(() => expect(voxtral.sockets[1]!.updates).toHaveLength(1));

    // The senior speaks again: the whole sentence reaches the new socket and is transcribed (not the SOS line).
    for (const frame of toneFrames(400)) stream.append(frame);
    await expect(stream.flush(new AbortController().signal)).resolves.toBe('Je suis encore là');
    expect(voxtral.sockets[1]!.audioBytes).toBe(400 * 32);
    // The dead socket was counted closed once cut, the new one is counted open (the open-sockets gauge).
    expect(sockets).toEqual({ opened: 2, closed: 1 });
    stream.close();
    await vi.waitFor(() => expect(sockets).toEqual({ opened: 2, closed: 2 }));
  });
});

describe('STT_BUDGET_MS, the one bound of a flush', () => {
  const services = (budgetMs: number) =>
    createVoiceServices(loadConfig({ KOHAMI_ENV: 'test', MISTRAL_API_KEY: 'test-key', MISTRAL_BASE_URL: voxtral.baseUrl, STT_BUDGET_MS: String(budgetMs) }), {
      // Neither is reached: no session, no context bias, no lines here.
      pool: {} as pg.Pool,
      consents: {} as ConsentPort,
      variations: loadCacheVariations(),
      metrics: createMetrics(),
      logger: pino({ level: 'silent' }),
    });

  it('a budget above 5 s is not capped by the transcriber: a transcript after 5.2 s is still taken', async () => {
    voxtral.utterances.push({ text: 'Il fait beau aujourd’hui' });
    const stream = await (await services(6000)).transcriber!.open({ contextBias: [], signal: new AbortController().signal });
    // From here the flush's bound and the fake's latency run on one simulated clock; the socket is real.
    vi.useFakeTimers({ toFake: ['setTimeout', 'clearTimeout'] });
    voxtral.transcriptionLatencyMs = 5200;
    for (const frame of toneFrames(200)) stream.append(frame);
    const flushed = stream.flush(new AbortController().signal);
    await vi.waitFor(() => expect(voxtral.sockets[0]!.flushes).toBe(1));
    vi.advanceTimersByTime(5200);
    await expect(flushed).resolves.toBe('Il fait beau aujourd’hui');
    stream.close();
  });

  it('a short budget bounds the flush on its own', async () => {
    // Hung on every socket: the flush's own socket, and the fresh one its utterance is replayed on.
    voxtral.utterances.push({ text: 'jamais', fault: 'hang' }, { text: 'jamais', fault: 'hang' });
    const stream = await (await services(300)).transcriber!.open({ contextBias: [], signal: new AbortController().signal });
    for (const frame of toneFrames(200)) stream.append(frame);
    const started = performance.now();
    await expect(stream.flush(new AbortController().signal)).rejects.toThrow(new TranscriptionTimeoutError('no transcript within 300 ms'));
    expect(performance.now() - started).toBeLessThan(1000);
    stream.close();
  });
});

describe('the streaming delay (STT_STREAMING_DELAY_MS)', () => {
  it('is sent as target_streaming_delay_ms when set, and left to the service when not', async () => {
    const open = (streamingDelayMs?: number) =>
      new MistralTranscriber({ apiKey: 'test-key', baseUrl: voxtral.baseUrl, env: 'test', ...(streamingDelayMs !== undefined ? { streamingDelayMs } : {}) }).open({ contextBias: [], signal: new AbortController().signal });
    const set = await open(240);
    const unset = await open();
    expect(voxtral.sockets.map((s) => s.updates[0]?.target_streaming_delay_ms)).toEqual([240, undefined]);
    set.close();
    unset.close();
  });
});
