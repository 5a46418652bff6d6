import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import pg from 'pg';
import pino from 'pino';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { loadCacheVariations } from '../../adapters/fluxes/cache-flux.adapter.ts';
import { PgConsentAdapter } from '../../adapters/postgres/pg-consent.adapter.ts';
import { EspeakSpeaker, ESPEAK_SAMPLE_RATE } from '../../adapters/voice/espeak-speaker.ts';
import { findPicoLingware, PICO_FRENCH_FILES, PICO_LINGWARE_DIR } from '../../adapters/voice/pico-lingware.ts';
import { PICO_SAMPLE_RATE, PicoLoadError, PicoSpeaker } from '../../adapters/voice/pico-speaker.ts';
import { MISTRAL_TTS_SAMPLE_RATE } from '../../adapters/voice/mistral-speaker.ts';
import { resample } from '../../machines/voice/resample.ts';
import { loadConfig } from '../../runtime/config.ts';
import { createMetrics } from '../../runtime/metrics.ts';
import { OfflineVoiceError, offlineVoiceOf } from '../../runtime/voice/offline-speaker.ts';
import { createVoiceServices } from '../../runtime/voice/voice-services.ts';
import { FakeMistral } from '../support/fake-mistral.ts';
import { FakeVoxtral } from '../support/fake-voxtral.ts';
import { concat } from '../support/speech.ts';

/**
 * SVOX Pico as the offline voice: Debian's libttspico-data installed (`.ci/run` installs it; the
 * README says how), its lingware in PICO_LINGWARE_DIR's default. The espeak-ng path is the same
 * runtime with a lingware folder that is empty, as on a machine without the package.
 */
const voxtral = new FakeVoxtral();
const mistral = new FakeMistral(voxtral);
const noLingware = mkdtempSync(path.join(tmpdir(), 'kohami-no-pico-'));
const variations = loadCacheVariations();
const SENTENCE = 'Bonjour, je suis là pour discuter avec vous.';
/** Two renderings of one text by Pico differ by a few ms (its pauses' faint noise); by espeak-ng, by far more. */
const SAME_LENGTH = 0.05;

beforeAll(async () => {
  await mistral.start();
});
afterAll(async () => {
  await voxtral.stop();
  await mistral.stop();
});

async function collect(iterable: AsyncIterable<Int16Array>): Promise<Int16Array> {
  const chunks: Int16Array[] = [];
  for await (const chunk of iterable) chunks.push(chunk);
  return concat(chunks);
}
const rms = (pcm: Int16Array) => Math.sqrt(pcm.reduce((sum, s) => sum + s * s, 0) / Math.max(1, pcm.length));
const say = (speaker: { synthesize(text: string, signal: AbortSignal): AsyncIterable<Int16Array> }, text = SENTENCE) => collect(speaker.synthesize(text, new AbortController().signal));

async function services(env: Record<string, string>) {
  const config = loadConfig({ KOHAMI_ENV: 'test', ...env });
  const pool = new pg.Pool({ max: 1 }); // never connected: speaking needs no database
  const metrics = createMetrics();
  return { services: await createVoiceServices(config, { pool, consents: new PgConsentAdapter(pool), variations, metrics, logger: pino({ level: 'silent' }) }), metrics, pool };
}

describe('choosing the offline voice', () => {
  it("SVOX Pico when its French lingware is installed (Debian's libttspico-data), espeak-ng when it is not or when told", () => {
    expect(findPicoLingware(PICO_LINGWARE_DIR), `libttspico-data is not installed in ${PICO_LINGWARE_DIR}: see the README's prerequisites`).not.toBeNull();
    expect(offlineVoiceOf(loadConfig({ KOHAMI_ENV: 'test' }))).toMatchObject({ engine: 'pico', lingware: { dir: PICO_LINGWARE_DIR } });
    expect(offlineVoiceOf(loadConfig({ KOHAMI_ENV: 'test', PICO_LINGWARE_DIR: noLingware }))).toEqual({ engine: 'espeak' });
    expect(offlineVoiceOf(loadConfig({ KOHAMI_ENV: 'test', OFFLINE_VOICE: 'espeak' }))).toEqual({ engine: 'espeak' });
    expect(offlineVoiceOf(loadConfig({ KOHAMI_ENV: 'test', OFFLINE_VOICE: 'pico' }))).toMatchObject({ engine: 'pico' });
  });

  it('OFFLINE_VOICE=pico without the lingware refuses to start, naming the package to install', async () => {
    const start = () => services({ OFFLINE_VOICE: 'pico', PICO_LINGWARE_DIR: noLingware });
    await expect(start()).rejects.toThrow(OfflineVoiceError);
    await expect(start()).rejects.toThrow(/libttspico-data/);
  });
});

describe('SVOX Pico offline speaker', () => {
  const pico = () => new PicoSpeaker({ lingware: findPicoLingware(PICO_LINGWARE_DIR)! });

  it('speaks French: non-silent, at 16 kHz, with a sensible duration and no long final silence', async () => {
    const speaker = pico();
    expect(speaker.sampleRate).toBe(PICO_SAMPLE_RATE);
    const pcm = await say(speaker);
    // Nine words at Pico's pace less 10 %: between 2 and 4 seconds.
    expect(pcm.length / PICO_SAMPLE_RATE).toBeGreaterThan(2);
    expect(pcm.length / PICO_SAMPLE_RATE).toBeLessThan(4);
    expect(rms(pcm)).toBeGreaterThan(500);
    // Pico ends a sentence with 0.6–1 s of silence; about 150 ms of it is kept, a sentence's pause.
    let end = pcm.length;
    while (end > 0 && Math.abs(pcm[end - 1]!) <= 256) end--;
    expect((pcm.length - end) / PICO_SAMPLE_RATE).toBeLessThanOrEqual(0.2);
  });

  it('a reply’s own markup is spoken as text, not obeyed', async () => {
    const speaker = pico();
    const plain = await say(speaker, 'Bonjour  speed level="400" Marie /speed .');
    // Obeyed, « Marie » would be said four times as fast and the words of the tag not at all: a second shorter.
    expect(Math.abs((await say(speaker, 'Bonjour <speed level="400">Marie</speed>.')).length - plain.length)).toBeLessThanOrEqual(SAME_LENGTH * PICO_SAMPLE_RATE);
  });

  it('stops at once when aborted, and says nothing for an empty text', async () => {
    const controller = new AbortController();
    controller.abort();
    expect(await collect(pico().synthesize(SENTENCE, controller.signal))).toEqual(new Int16Array(0));
    expect(await say(pico(), '   ')).toEqual(new Int16Array(0));
  });
});

describe('the runtime’s offline voice', () => {
  it('offline, replies are spoken by SVOX Pico when its lingware is installed, and by espeak-ng when it is not', async () => {
    const withPico = await services({});
    const without = await services({ PICO_LINGWARE_DIR: noLingware });
    try {
      const pico = new PicoSpeaker({ lingware: findPicoLingware(PICO_LINGWARE_DIR)! });
      expect(withPico.services.speaker.voiceId).toBe(pico.voiceId);
      expect(withPico.services.speaker.sampleRate).toBe(PICO_SAMPLE_RATE);
      const spoken = await say(withPico.services.speaker);
      expect(rms(spoken)).toBeGreaterThan(500);
      expect(Math.abs(spoken.length - (await say(pico)).length)).toBeLessThanOrEqual(SAME_LENGTH * PICO_SAMPLE_RATE);
      expect(Math.abs(spoken.length / PICO_SAMPLE_RATE - (await say(new EspeakSpeaker())).length / ESPEAK_SAMPLE_RATE)).toBeGreaterThan(2 * SAME_LENGTH);

      const espeak = new EspeakSpeaker();
      expect(without.services.speaker.voiceId).toBe(espeak.voiceId);
      expect(without.services.speaker.sampleRate).toBe(espeak.sampleRate);
      expect(rms(await say(without.services.speaker))).toBeGreaterThan(500);
    } finally {
      await Promise.all([withPico.pool.end(), without.pool.end()]);
    }
  });

  it('OFFLINE_VOICE=auto: lingware that is there but will not load, and espeak-ng speaks (at Pico’s rate), said once in the log; `pico` fails instead', async () => {
    const corrupt = mkdtempSync(path.join(tmpdir(), 'kohami-corrupt-pico-'));
    for (const file of PICO_FRENCH_FILES) writeFileSync(path.join(corrupt, file), Buffer.alloc(4096, 0x5a));
    const logged: string[] = [];
    const logger = pino({ level: 'warn' }, { write: (line: string) => void logged.push(line) });
    const pool = new pg.Pool({ max: 1 }); // never connected: speaking needs no database
    const deps = { pool, consents: new PgConsentAdapter(pool), variations, metrics: createMetrics(), logger };
    try {
      const auto = await createVoiceServices(loadConfig({ KOHAMI_ENV: 'test', PICO_LINGWARE_DIR: corrupt }), deps);
      expect(auto.speaker.sampleRate).toBe(PICO_SAMPLE_RATE);
      const expected = resample(await say(new EspeakSpeaker()), ESPEAK_SAMPLE_RATE, PICO_SAMPLE_RATE);
      for (const sentence of [1, 2]) {
        const spoken = await say(auto.speaker);
        expect(rms(spoken), `sentence ${sentence}`).toBeGreaterThan(500);
        expect(Math.abs(spoken.length - expected.length), `sentence ${sentence}`).toBeLessThanOrEqual(SAME_LENGTH * PICO_SAMPLE_RATE);
      }
      expect(auto.speaker.voiceId).toBe(new EspeakSpeaker().voiceId);
      expect(logged.map((line) => (JSON.parse(line) as { msg: string }).msg)).toEqual(['SVOX Pico did not load: the offline voice is espeak-ng from now on']);

      const pico = await createVoiceServices(loadConfig({ KOHAMI_ENV: 'test', OFFLINE_VOICE: 'pico', PICO_LINGWARE_DIR: corrupt }), deps);
      await expect(say(pico.speaker)).rejects.toThrow(PicoLoadError);
    } finally {
      await pool.end();
      rmSync(corrupt, { recursive: true, force: true });
    }
  });

  it('with Voxtral, a sentence its speech service fails is spoken by SVOX Pico at Voxtral’s rate, and counted', async () => {
    voxtral.speechStatus = 503;
    const { services: voice, metrics, pool } = await services({ MISTRAL_API_KEY: 'test-key', MISTRAL_BASE_URL: mistral.baseUrl });
    try {
      const pico = new PicoSpeaker({ lingware: findPicoLingware(PICO_LINGWARE_DIR)! });
      expect(voice.speaker.voiceId).toMatch(new RegExp(`\\|${pico.voiceId}$`));
      expect(voice.speaker.sampleRate).toBe(MISTRAL_TTS_SAMPLE_RATE);
      const spoken = await say(voice.speaker);
      // Pico's rendering, resampled to the kiosk stream's rate.
      const expected = resample(await say(pico), PICO_SAMPLE_RATE, MISTRAL_TTS_SAMPLE_RATE);
      expect(Math.abs(spoken.length - expected.length)).toBeLessThanOrEqual(SAME_LENGTH * MISTRAL_TTS_SAMPLE_RATE);
      expect(rms(spoken)).toBeGreaterThan(500);
      expect(await metrics.registry.getSingleMetricAsString('kohami_speech_errors_total')).toMatch(/service="tts"} 1/);
    } finally {
      voxtral.speechStatus = 200;
      await pool.end();
    }
  });
});
