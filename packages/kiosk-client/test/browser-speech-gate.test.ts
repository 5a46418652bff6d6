import type { Browser } from 'playwright-core';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import type { FakeVoxtral } from '../../../test/support/fake-voxtral.ts';
import { startKioskBrowserSession, type KioskBrowserSession } from '../../../test/support/kiosk-browser-session.ts';
import { ASKED, BARGED, MIC_SILENCE_MS, recordInPage, recordPageSocket } from '../../../test/support/kiosk-browser.ts';
import { KIOSK_TOKEN, type TestRuntime } from '../../../test/support/runtime.ts';
import { SPEECH_GATE_DEFAULTS } from '../src/browser/speech-gate.ts';
import { DEFAULT_BOUNDS } from '../src/client.ts';

/** The page's client waits this long for the socket and then for session.ready (Chromium starts slowly on a busy machine). */
const READY_POLL = { timeout: DEFAULT_BOUNDS.connectTimeoutMs + DEFAULT_BOUNDS.readyTimeoutMs };

/**
 * The speech gate through the /kiosk page (which uses BrowserVoice) and the real runtime, in headless
 * Chromium whose fake microphone loops a phrase and MIC_SILENCE_MS of digital silence. The page records
 * every microphone frame it sends (when, and how loud); the waits are on what the page sends and receives.
 */
const REAL_TIME_TEST_MS = 180_000;
const FRAME_MS = 20;
/** Quieter than any speech frame, louder than the digital silence around the phrase. */
const QUIET_DB = -60;
/**
 * The shortest gap a gate leaves in the loop's silence: all of it but the first hang-over and the next
 * speech's pre-roll, less a margin for the fake microphone's pace.
 */
const GATED_GAP_MS = MIC_SILENCE_MS - SPEECH_GATE_DEFAULTS.hangOverMs - SPEECH_GATE_DEFAULTS.preRollMs - 500;

let session: KioskBrowserSession;
let voxtral: FakeVoxtral;
let rt: TestRuntime;
let browser: Browser;

beforeAll(async () => {
  session = await startKioskBrowserSession('kc-gate');
  ({ voxtral, rt, browser } = session);
}, REAL_TIME_TEST_MS);
afterEach(() => session?.closePages());
afterAll(() => session?.stop());

type MicFrame = { at: number; bytes: number; db: number };

/** Opens /kiosk with `query`, recording in the page every binary frame its socket sends: when, its size, its level (PCM). */
async function openKiosk(query: string) {
  const page = await browser.newPage();
  const errors: string[] = [];
  page.on('pageerror', (e) => errors.push(e.message));
  await page.addInitScript(() => {
    const frames: MicFrame[] = [];
    (window as unknown as { micFrames: MicFrame[] }).micFrames = frames;
    const send = WebSocket.prototype.send;
    WebSocket.prototype.send = function (this: WebSocket, data) {
      if (typeof data !== 'string') {
        const bytes = data instanceof ArrayBuffer ? new Uint8Array(data) : new Uint8Array((data as ArrayBufferView).buffer, (data as ArrayBufferView).byteOffset, (data as ArrayBufferView).byteLength);
        const view = new DataView(bytes.buffer, bytes.byteOffset, bytes.byteLength);
        let sum = 0;
        for (let i = 0; i + 1 < bytes.length; i += 2) sum += view.getInt16(i, true) ** 2;
        const rms = Math.sqrt(sum / Math.max(1, bytes.length / 2)) / 32768;
        frames.push({ at: performance.now(), bytes: bytes.length, db: rms > 0 ? 20 * Math.log10(rms) : -96 });
      }
      return send.call(this, data);
    };
  });
  const inPage = await recordInPage(page);
  const log = recordPageSocket(page);
  await page.goto(`${rt.url}/kiosk?token=${KIOSK_TOKEN}${query}`);
  const micFrames = () => page.evaluate(() => (window as unknown as { micFrames: MicFrame[] }).micFrames);
  const sessionStart = async () => (await inPage()).filter((l) => l.dir === 'out' && l.frame.type === 'session.start').at(-1)?.frame;
  return { errors, log, micFrames, sessionStart };
}

/** The longest stretch with no microphone frame, and the frames sent right after it. */
function longestGap(frames: MicFrame[]): { ms: number; after: MicFrame[] } {
  let best = { ms: 0, index: 0 };
  for (let i = 1; i < frames.length; i++) if (frames[i]!.at - frames[i - 1]!.at > best.ms) best = { ms: frames[i]!.at - frames[i - 1]!.at, index: i };
  return { ms: best.ms, after: frames.slice(best.index) };
}

describe('the speech gate (BrowserVoice, PCM) through the real runtime', () => {
  it('sends no silence, sends speech with its pre-roll, and the turn is answered', async () => {
    voxtral.utterances.push({ text: ASKED, wordEndsMs: ASKED.split(' ').map((_, i) => 400 + 100 * i) }, { text: BARGED });
    const { errors, log, micFrames, sessionStart } = await openKiosk('&codec=pcm');
    const got = (type: string, turnId?: string) => log.received.find((l) => l.frame.type === type && (turnId === undefined || l.frame.turnId === turnId));
    // The page declares its gate, so that the runtime hears its gaps as silence.
    await expect.poll(sessionStart).toMatchObject({ mode: 'voice', audio: { kiosk: { gate: true } } });
    // The runtime says it accepts gaps: only then does the page gate its microphone.
    await expect.poll(() => got('session.ready')?.frame, READY_POLL).toMatchObject({ mode: 'voice', audio: { gaps: true, input: { encoding: 'pcm_s16le', sampleRate: 16_000 } } });

    // The turn is answered: the speech was heard and its end found, though the microphone went quiet after it.
    await expect.poll(() => got('transcript.final')?.frame, { timeout: REAL_TIME_TEST_MS / 4 }).toMatchObject({ turnId: 'v1', text: ASKED });
    await expect.poll(() => got('reply.done', 'v1'), { timeout: REAL_TIME_TEST_MS / 4 }).toBeDefined();

    // Nothing of the silence goes but its first hang-over and the next speech's pre-roll; then the phrase
    // comes again, and frames flow again after that gap.
    const resumed = async () => {
      const gap = longestGap(await micFrames());
      return gap.ms >= GATED_GAP_MS && gap.after.length > SPEECH_GATE_DEFAULTS.preRollMs / FRAME_MS + 10;
    };
    await expect.poll(resumed, { timeout: REAL_TIME_TEST_MS / 4 }).toBe(true);
    const frames = await micFrames();
    expect(new Set(frames.map((f) => f.bytes))).toEqual(new Set([640]));
    const { after } = longestGap(frames);
    // After the gap: first the pre-roll (the silence just before the phrase), at once, then the speech.
    const preRoll = after.findIndex((f) => f.db > QUIET_DB);
    expect(preRoll).toBeGreaterThanOrEqual((SPEECH_GATE_DEFAULTS.preRollMs - SPEECH_GATE_DEFAULTS.onsetMs) / FRAME_MS - 1);
    expect(after[preRoll - 1]!.at - after[0]!.at).toBeLessThan(SPEECH_GATE_DEFAULTS.preRollMs / 2);
    expect(log.received.filter((l) => l.frame.type === 'error')).toEqual([]);
    expect(errors).toEqual([]);
  }, REAL_TIME_TEST_MS);

  it('?gate=off streams the microphone on, silence included', async () => {
    const { errors, log, micFrames, sessionStart } = await openKiosk('&codec=pcm&gate=off');
    // No gate declared: a stall in its audio is not filled with silence.
    await expect.poll(sessionStart).toMatchObject({ mode: 'voice', audio: { kiosk: { gate: false } } });
    await expect.poll(() => log.received.find((l) => l.frame.type === 'session.ready')?.frame, READY_POLL).toMatchObject({ audio: { gaps: true } });
    // Longer than the phrase and its hang-over: the silence after it is being sent too.
    await expect.poll(async () => (await micFrames()).length, { timeout: REAL_TIME_TEST_MS / 4 }).toBeGreaterThan(MIC_SILENCE_MS / FRAME_MS);
    const frames = await micFrames();
    expect(frames.filter((f) => f.db <= QUIET_DB).length).toBeGreaterThan((MIC_SILENCE_MS / 2) / FRAME_MS);
    // No gap a gate would leave (a page on a loaded machine may still pause its sending: 597 ms seen at load 13).
    expect(longestGap(frames).ms).toBeLessThan(GATED_GAP_MS);
    expect(errors).toEqual([]);
  }, REAL_TIME_TEST_MS);
});
