import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import type { Browser, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { launchKioskBrowser, writeMicWav } from '../../../test/support/kiosk-browser.ts';
import { startTestRuntime, type TestRuntime } from '../../../test/support/runtime.ts';
import { JITTER_BUFFER } from '../src/browser/reply-player.ts';
import { PROGRESS_EVERY_MS } from '../src/browser/voice.ts';

/**
 * `BrowserVoice`'s playback in headless Chromium (the package's modules as the runtime serves them):
 * the reply's frames go in as the runtime's would, what the voice sends goes to a recording link, and
 * the test holds frames back to make them late. Every wait is on an event the voice reports.
 */
const BROWSER_TEST_MS = 120_000;
const FRAME_MS = 20;
const { prebufferMs, rebufferMs, horizonMs } = JITTER_BUFFER;

let rt: TestRuntime;
let browser: Browser;
let page: Page;
let dir: string;

type Sent = { type: 'progress' | 'done' | 'interrupt'; turnId: string; playedMs?: number };
type Event = { type: 'mark' | 'underrun' | 'played' | 'overflow'; turnId: string; value?: number; playedMs: number };

beforeAll(async () => {
  rt = await startTestRuntime();
  dir = await mkdtemp(path.join(tmpdir(), 'kohami-kc-playback-'));
  browser = await launchKioskBrowser(await writeMicWav(dir));
  page = await browser.newPage();
  page.on('pageerror', (e) => console.error(e));
  // A document of the runtime's origin, which serves the package's modules.
  await page.goto(`${rt.url}/kiosk/client/browser.ts`);
  // A string, not a function: vitest would rewrite the function's import() for Node.
  await page.evaluate(`(async () => {
    const { BrowserVoice, ReplyPlayer } = await import('/kiosk/client/browser.ts');
    const sent = [];
    const events = [];
    const link = {
      sendAudio: () => true,
      playbackProgress: (turnId, playedMs) => sent.push({ type: 'progress', turnId, playedMs }),
      playbackDone: (turnId) => sent.push({ type: 'done', turnId }),
      interrupt: (turnId, playedMs) => sent.push({ type: 'interrupt', turnId, playedMs }),
      mute: () => undefined,
    };
    const voice = await BrowserVoice.open({
      link,
      codec: 'pcm',
      events: {
        mark: (e) => events.push({ type: 'mark', turnId: e.turnId, value: e.textOffset, playedMs: voice.player.playedMs() }),
        underrun: (e) => events.push({ type: 'underrun', turnId: e.turnId, value: e.count, playedMs: voice.player.playedMs() }),
        played: (turnId) => events.push({ type: 'played', turnId, playedMs: 0 }),
      },
    });
    // ms of a quiet tone as the runtime's PCM frames (20 ms each), from fromMs in the turn.
    const push = (turnId, fromMs, ms) => {
      for (let at = fromMs; at < fromMs + ms; at += 20) {
        const payload = new Uint8Array(24 * 20 * 2);
        const view = new DataView(payload.buffer);
        for (let i = 0; i < 480; i++) view.setInt16(2 * i, Math.round(3000 * Math.sin(i / 3)), true);
        voice.audio({ turnId, sampleOffset: 24 * at, payload });
      }
    };
    window.t = { voice, sent, events, push, ReplyPlayer };
  })()`);
}, BROWSER_TEST_MS);
afterAll(async () => {
  await browser?.close();
  await rt?.close();
  if (dir) await rm(dir, { recursive: true, force: true });
});

type T = {
  voice: { frame(f: unknown): void; interrupt(turnId?: string): void; player: { ctx: AudioContext; turnId: string | null; liveSources: number; underruns: number; playedMs(): number; bufferedMs(): number } };
  sent: Sent[];
  events: Event[];
  push(turnId: string, fromMs: number, ms: number): void;
  ReplyPlayer: new (ctx: AudioContext, events: object, settings: object) => { begin(turnId: string, rate: number): void; push(turnId: string, offset: number, pcm: Float32Array): void; bufferedMs(): number; stop(): void };
};
const inPage = <R, A>(fn: (t: T, arg: A) => R, arg?: A): Promise<R> =>
  page.evaluate(({ src, arg }) => new Function('t', 'arg', `return (${src})(t, arg)`)((window as unknown as { t: T }).t, arg), { src: fn.toString(), arg });
const events = (turnId: string, type?: Event['type']) => inPage((t, a: { turnId: string; type?: string }) => t.events.filter((e) => e.turnId === a.turnId && (!a.type || e.type === a.type)), { turnId, type });
const sent = (turnId: string, type?: Sent['type']) => inPage((t, a: { turnId: string; type?: string }) => t.sent.filter((e) => e.turnId === a.turnId && (!a.type || e.type === a.type)), { turnId, type });

describe('the browser voice’s reply playback (jitter buffer, progress, marks, interrupt)', () => {
  it('waits for its prebuffer, survives a late frame (one underrun, reported), passes the marks in order, and says when all has played', async () => {
    await inPage((t) => {
      t.voice.frame({ type: 'reply.audio.start', turnId: 'r1', encoding: 'pcm_s16le', sampleRate: 24_000 });
      t.voice.frame({ type: 'reply.audio.mark', turnId: 'r1', sampleOffset: 24 * 100, textOffset: 10 });
      t.voice.frame({ type: 'reply.audio.mark', turnId: 'r1', sampleOffset: 24 * 600, textOffset: 25 });
    });
    // Under the prebuffer: nothing plays yet.
    await inPage((t, ms: number) => t.push('r1', 0, ms), prebufferMs - FRAME_MS);
    expect(await inPage((t) => t.voice.player.liveSources)).toBe(0);
    // The prebuffer's last frame starts it: playing now, or — a busy machine slower to answer than the
    // prebuffer's 120 ms of audio — already played dry (the underrun below).
    await inPage((t, ms: number) => t.push('r1', ms, 20), prebufferMs - FRAME_MS);
    expect(await inPage((t) => t.voice.player.liveSources > 0 || t.voice.player.underruns > 0)).toBe(true);
    // The next frames are late: the audio runs dry, which is an underrun, once, after all that was given played.
    await expect.poll(() => events('r1', 'underrun'), { timeout: BROWSER_TEST_MS / 4 }).toHaveLength(1);
    const [underrun] = await events('r1', 'underrun');
    expect(underrun!.playedMs).toBeGreaterThanOrEqual(prebufferMs - FRAME_MS);
    expect(underrun!.playedMs).toBeLessThanOrEqual(prebufferMs);
    // The first mark (100 ms) was heard before it; the second (600 ms) was not.
    expect((await events('r1', 'mark')).map((e) => e.value)).toEqual([10]);
    // Under the rebuffer, the late frames wait; at it, playback goes on.
    await inPage((t, a: { from: number; ms: number }) => t.push('r1', a.from, a.ms), { from: prebufferMs, ms: rebufferMs - FRAME_MS });
    expect(await inPage((t) => t.voice.player.liveSources)).toBe(0);
    // A frame given twice (a late duplicate) is dropped, not played twice.
    await inPage((t, ms: number) => t.push('r1', ms, 20), prebufferMs);
    expect(await inPage((t) => t.voice.player.liveSources)).toBe(0);
    await inPage((t, ms: number) => t.push('r1', ms, 1000 - ms), prebufferMs + rebufferMs - FRAME_MS);
    expect(await inPage((t) => t.voice.player.liveSources)).toBeGreaterThan(0);
    await inPage((t) => t.voice.frame({ type: 'reply.audio.end', turnId: 'r1', durationMs: 1000 }));
    await expect.poll(() => sent('r1', 'done'), { timeout: BROWSER_TEST_MS / 4 }).toHaveLength(1);
    expect(await events('r1', 'underrun')).toHaveLength(1);
    expect((await events('r1', 'mark')).map((e) => e.value)).toEqual([10, 25]);
    expect((await events('r1', 'mark'))[1]!.playedMs).toBeGreaterThanOrEqual(600);
    expect(await events('r1', 'played')).toHaveLength(1);
    // playback.progress every PROGRESS_EVERY_MS while it played, never going back, never past the audio.
    const progress = (await sent('r1', 'progress')).map((s) => s.playedMs!);
    expect(progress.length).toBeGreaterThanOrEqual(Math.floor(1000 / PROGRESS_EVERY_MS) - 1);
    expect(progress).toEqual([...progress].sort((a, b) => a - b));
    expect(progress.at(-1)!).toBeLessThanOrEqual(1000);
  }, BROWSER_TEST_MS);

  it('schedules no more than its horizon ahead, whatever has arrived, and an interrupt says how much was heard', async () => {
    await inPage((t) => {
      t.voice.frame({ type: 'reply.audio.start', turnId: 'r2', encoding: 'pcm_s16le', sampleRate: 24_000 });
      t.push('r2', 0, 5000);
    });
    const live = await inPage((t) => t.voice.player.liveSources);
    expect(live).toBeGreaterThan(0);
    expect(live).toBeLessThanOrEqual(horizonMs / FRAME_MS + 2);
    expect(await inPage((t) => t.voice.player.bufferedMs())).toBeGreaterThan(4000);
    await expect.poll(() => sent('r2', 'progress'), { timeout: BROWSER_TEST_MS / 4 }).toContainEqual(expect.objectContaining({ playedMs: expect.any(Number) }));
    await expect.poll(async () => (await sent('r2', 'progress')).some((s) => s.playedMs! > 300), { timeout: BROWSER_TEST_MS / 4 }).toBe(true);
    // The audio clock runs on its own thread: it may move between two readings in one task (by 8 ms, on a loaded machine).
    const [before, interrupted, clockMovedMs] = await inPage((t) => {
      const since = t.voice.player.ctx.currentTime;
      const heard = t.voice.player.playedMs();
      t.voice.interrupt();
      return [heard, t.sent.find((s) => s.type === 'interrupt' && s.turnId === 'r2'), (t.voice.player.ctx.currentTime - since) * 1000] as const;
    });
    expect(interrupted).toMatchObject({ turnId: 'r2' });
    expect(interrupted!.playedMs).toBeGreaterThanOrEqual(before);
    expect(interrupted!.playedMs).toBeLessThanOrEqual(before + Math.ceil(clockMovedMs));
    expect(await inPage((t) => [t.voice.player.turnId, t.voice.player.liveSources])).toEqual([null, 0]);
    // Its late frames are dropped; it is never reported done.
    await inPage((t) => t.push('r2', 5000, 200));
    expect(await inPage((t) => t.voice.player.turnId)).toBeNull();
    expect(await sent('r2', 'done')).toEqual([]);
  }, BROWSER_TEST_MS);

  it('holds at most maxBufferMs: what comes over it is dropped, reported once', async () => {
    const [overflows, bufferedMs] = await inPage((t, settings: { maxBufferMs: number }) => {
      const ctx = new AudioContext({ sampleRate: 24_000 });
      let overflows = 0;
      const player = new t.ReplyPlayer(ctx, { done() {}, change() {}, overflow: () => (overflows += 1) }, settings);
      player.begin('r3', 24_000);
      for (let at = 0; at < 3000; at += 20) player.push('r3', 24 * at, new Float32Array(480));
      const held = player.bufferedMs();
      player.stop();
      void ctx.close();
      return [overflows, held];
    }, { maxBufferMs: 500 });
    expect(overflows).toBe(1);
    // Queued, and scheduled up to the horizon (its last frame may cross it, after the start's 30 ms lead).
    expect(bufferedMs).toBeLessThanOrEqual(500 + horizonMs + 2 * FRAME_MS);
  }, BROWSER_TEST_MS);
});
