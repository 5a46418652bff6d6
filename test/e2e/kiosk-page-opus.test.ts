import type { Browser } from 'playwright-core';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import type { FakeMistral } from '../support/fake-mistral.ts';
import type { FakeVoxtral } from '../support/fake-voxtral.ts';
import { startKioskBrowserSession, type KioskBrowserSession } from '../support/kiosk-browser-session.ts';
import { ASKED, BARGED, everShown, handledFrame, LOOP_BACK_POLL, progressReports, recordInPage, recordPageSocket, type SocketLog, REPLY, REPLY_MS, statesWhilePlaying } from '../support/kiosk-browser.ts';
import { KIOSK_TOKEN, type TestRuntime } from '../support/runtime.ts';
import { DEFAULT_BOUNDS } from '@kohami/kiosk-client';

/**
 * The /kiosk page in Opus: Debian's headless Chromium has WebCodecs' Opus encoder and decoder, so the
 * page offers Opus for its microphone (48 kHz, one 20 ms packet per binary frame) and lists it first for
 * the replies. The same session as kiosk-page.test.ts's PCM one: speech heard, transcribed, the reply
 * played with progress reports, and cut by speech over it.
 */
const REAL_TIME_TEST_MS = 180_000;
/** 20 ms of 16 kHz s16le, what a PCM microphone frame is. */
const PCM_FRAME_BYTES = 640;
/** 24 kbit/s is 60 bytes in 20 ms: 200 is over three times what a packet needs, and under a third of a PCM frame. */
const MAX_OPUS_PACKET_BYTES = 200;

let session: KioskBrowserSession;
let voxtral: FakeVoxtral;
let mistral: FakeMistral;
let rt: TestRuntime;
let browser: Browser;

beforeAll(async () => {
  session = await startKioskBrowserSession('kiosk-opus');
  ({ voxtral, mistral, rt, browser } = session);
}, REAL_TIME_TEST_MS);
afterEach(() => session?.closePages());
afterAll(() => session?.stop());

async function openKiosk(query = '') {
  const page = await browser.newPage();
  const errors: string[] = [];
  page.on('pageerror', (e) => errors.push(e.message));
  // A script refused by the page's Content-Security-Policy, or a codec failure (the page warns of it).
  page.on('console', (m) => /Content Security Policy|opus (en|de)coder/i.test(m.text()) && errors.push(m.text()));
  const inPage = await recordInPage(page);
  const log = recordPageSocket(page);
  await page.goto(`${rt.url}/kiosk?token=${KIOSK_TOKEN}${query}`);
  const got = (type: string, turnId?: string) => log.received.find((l) => l.frame.type === type && (turnId === undefined || l.frame.turnId === turnId));
  return { page, errors, log, got, inPage, started: async () => (await inPage()).filter((l) => l.dir === 'out' && l.frame.type === 'session.start').at(-1)!.frame };
}

const progressOf = (log: SocketLog, turnId: string) =>
  log.sent.filter((l) => l.frame.type === 'playback.progress' && l.frame.turnId === turnId).map((l) => l.frame.playedMs as number);

describe('the browser kiosk (/kiosk) in Opus, in headless Chromium with a fake microphone', () => {
  it('negotiates Opus both ways; its speech is heard and transcribed, the reply plays and a barge-in cuts it', async () => {
    voxtral.utterances.push({ text: ASKED }, { text: BARGED });
    mistral.mode = { kind: 'stream', chunks: REPLY };
    const { page, errors, log, got, inPage, started } = await openKiosk();
    const firstSocket = voxtral.sockets.length;

    // The page's client waits this long for the socket and then for session.ready (Chromium starts slowly on a busy machine).
    await expect.poll(() => got('session.ready')?.frame, { timeout: DEFAULT_BOUNDS.connectTimeoutMs + DEFAULT_BOUNDS.readyTimeoutMs }).toMatchObject({ mode: 'voice' });
    const start = (await started()) as unknown as { type: string; audio: { input: unknown; output: { accept: unknown[] } } };
    expect(start.type).toBe('session.start');
    expect(start.audio.input).toEqual({ encoding: 'opus', sampleRate: 48_000 });
    // Opus first, PCM after it as the fallback.
    expect(start.audio.output.accept[0]).toEqual({ encoding: 'opus', sampleRate: 48_000 });
    expect(start.audio.output.accept.slice(1)).toContainEqual({ encoding: 'pcm_s16le', sampleRate: 24_000 });
    expect(got('session.ready')!.frame).toMatchObject({
      mode: 'voice',
      audio: { input: { encoding: 'opus', sampleRate: 48_000 }, output: { encoding: 'opus', sampleRate: 48_000 }, voiceInput: true },
    });

    // Speech detected on the decoded packets, and the page says so (its own record: the state may not last until a poll).
    await expect.poll(async () => everShown(await inPage(), 'user_speaking')).toBe(true);
    expect(got('vad')?.frame).toMatchObject({ state: 'speech_started' });
    // Packets, not PCM: every microphone frame is a small Opus packet.
    expect(Math.max(...log.micFrameBytes)).toBeLessThan(MAX_OPUS_PACKET_BYTES);
    expect(log.micFrameBytes.has(PCM_FRAME_BYTES)).toBe(false);

    await page.locator('#captions p.you:not(.interim)', { hasText: ASKED }).waitFor();
    expect(got('transcript.final')?.frame).toMatchObject({ turnId: 'v1', text: ASKED });
    // The recognizer was asked for, and got, 16 kHz s16le: the runtime decoded the packets.
    const stt = voxtral.sockets.slice(firstSocket);
    expect(stt.flatMap((s) => s.updates).filter((u) => u.audio_format)).toContainEqual(expect.objectContaining({ audio_format: { encoding: 'pcm_s16le', sample_rate: 16_000 } }));
    // Over a second of speech as 16 kHz s16le (32 bytes a ms).
    expect(stt.reduce((n, s) => n + s.audioBytes, 0) / 32).toBeGreaterThan(1000);

    // The reply comes as Opus and is decoded and played: the page's progress comes from what it scheduled.
    // Playing v1, and saying so — or that the senior speaks over it: the barge-in below, which a loaded machine may bring at once.
    await expect.poll(async () => statesWhilePlaying(await inPage(), 'v1').length).toBeGreaterThan(0);
    expect(statesWhilePlaying(await inPage(), 'v1').every((state) => state === 'speaking' || state === 'user_speaking')).toBe(true);
    expect(got('reply.audio.start', 'v1')!.frame).toMatchObject({ encoding: 'opus', sampleRate: 48_000 });
    await expect.poll(() => progressOf(log, 'v1').filter((ms) => ms > 0).length).toBeGreaterThanOrEqual(2);
    const played = progressOf(log, 'v1');
    expect(played.at(-1)!).toBeGreaterThan(played.find((ms) => ms > 0)!);
    expect(Math.max(...log.replyPayloadBytes)).toBeLessThan(MAX_OPUS_PACKET_BYTES);
    // The first: the barge-in's own reply (the same story) may already be shown too.
    await page.locator('#captions p.kohami', { hasText: 'Il était une fois' }).first().waitFor();

    // The phrase loops back over the reply: a barge-in; the runtime clears and the page goes silent.
    await expect.poll(() => got('reply.audio.clear', 'v1'), LOOP_BACK_POLL).toBeDefined();
    await page.waitForSelector('body[data-playing=""]');
    expect(await page.locator('#captions p.kohami.interrupted').count()).toBe(1);
    // What the page reported before it handled the clear.
    const pageLog = await inPage();
    const beforeClear = progressReports(pageLog, 'v1', -Infinity, handledFrame(pageLog, 'reply.audio.clear', 'v1')!.at).map((l) => l.frame.playedMs as number);
    expect(beforeClear.at(-1)!).toBeGreaterThan(500);
    expect(beforeClear.at(-1)!).toBeLessThan(REPLY_MS);
    expect(log.sent.some((l) => l.frame.type === 'playback.done' && l.frame.turnId === 'v1')).toBe(false);
    // What was said over it is the next turn.
    await page.locator('#captions p.you', { hasText: BARGED }).waitFor();

    expect(log.received.filter((l) => l.frame.type === 'error')).toEqual([]);
    expect(errors).toEqual([]);
  }, REAL_TIME_TEST_MS);

  it('with ?codec=pcm the page offers PCM only, and sends 20 ms frames of 16 kHz s16le', async () => {
    voxtral.utterances.splice(0, voxtral.utterances.length);
    const { errors, log, got, started } = await openKiosk('&codec=pcm');
    await expect.poll(() => got('session.ready')?.frame).toMatchObject({ audio: { input: { encoding: 'pcm_s16le', sampleRate: 16_000 }, output: { encoding: 'pcm_s16le' } } });
    const start = (await started()) as unknown as { audio: { input: unknown; output: { accept: Array<{ encoding: string }> } } };
    expect(start.audio.input).toEqual({ encoding: 'pcm_s16le', sampleRate: 16_000 });
    expect(start.audio.output.accept.map((a) => a.encoding)).not.toContain('opus');
    await expect.poll(() => log.micFrameBytes.size).toBeGreaterThan(0);
    expect([...log.micFrameBytes]).toEqual([PCM_FRAME_BYTES]);
    expect(errors).toEqual([]);
  }, REAL_TIME_TEST_MS);
});

