import { execFile } from 'node:child_process';
import { readFile, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { promisify } from 'node:util';
import type { Browser } from 'playwright-core';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { generateToken } from '../../adapters/postgres/tokens.ts';
import { CONSENT_CATEGORIES } from '../../machines/memory/memory.port.ts';
import { heardText } from '../../machines/voice/barge-in.ts';
import { DEFAULT_TAIL_MS } from '../../runtime/cli/voice-file-kiosk.ts';
import { VOICE_SETUP_MS } from '../../runtime/kiosk/page/kiosk-reconnect.js';
import { readWav, writeWav } from '@kohami/kiosk-client/node';
import type { FakeMistral } from '../support/fake-mistral.ts';
import { startKioskBrowserSession, type KioskBrowserSession } from '../support/kiosk-browser-session.ts';
import { ASKED, BARGED, everShown, handledFrame, LOOP_BACK_POLL, progressReports, recordInPage, recordPageSocket, REPLY, REPLY_MS, statesWhilePlaying } from '../support/kiosk-browser.ts';
import type { FakeVoxtral } from '../support/fake-voxtral.ts';
import { KIOSK_TOKEN, startTestRuntime, type TestRuntime } from '../support/runtime.ts';
import { speechScript } from '../support/speech.ts';
import { DEFAULT_BOUNDS } from '@kohami/kiosk-client';

/** The page's client waits this long for the socket and then for session.ready (Chromium starts slowly on a busy machine). */
const READY_POLL = { timeout: DEFAULT_BOUNDS.connectTimeoutMs + DEFAULT_BOUNDS.readyTimeoutMs };

const run = promisify(execFile);
/**
 * What these tests wait for happens in real time: Chromium, the kiosk CLI loading, a second
 * runtime opening PGlite, audio played at its own pace. Each wait is on an event or on the page's
 * state; this bounds the whole, generously, since a loaded machine stretches all of it.
 */
const REAL_TIME_TEST_MS = 180_000;

let session: KioskBrowserSession;
let voxtral: FakeVoxtral;
let mistral: FakeMistral;
let rt: TestRuntime;
let browser: Browser;
let dir: string;
/** The fake microphone's file: a French phrase, then a silence long enough to end the utterance; Chromium loops it. */
let micWav: string;

beforeAll(async () => {
  session = await startKioskBrowserSession('kiosk-page');
  ({ voxtral, mistral, rt, browser, dir, micWav } = session);
}, REAL_TIME_TEST_MS);
afterEach(() => session?.closePages());
afterAll(() => session?.stop());

describe('the browser kiosk (/kiosk) in headless Chromium with a fake microphone', () => {
  it('hears the senior, shows the transcript, plays the spoken reply with progress, and a barge-in cuts it', async () => {
    // Chromium's fake microphone may hand over the phrase faster than real time: the interim words are said early
    // (and come at Voxtral's shortest streaming delay, set above), so they show before the final transcript replaces them.
    voxtral.utterances.push({ text: ASKED, wordEndsMs: ASKED.split(' ').map((_, i) => 400 + 100 * i) }, { text: BARGED });
    const page = await browser.newPage();
    const inPage = await recordInPage(page);
    const errors: string[] = [];
    page.on('pageerror', (e) => errors.push(e.message));
    // A script, worklet or socket refused by the page's Content-Security-Policy is a console error.
    page.on('console', (m) => m.type() === 'error' && /Content Security Policy/i.test(m.text()) && errors.push(m.text()));
    const log = recordPageSocket(page);
    // PCM both ways here (`codec=pcm`); kiosk-page-opus.test.ts runs the same session in Opus.
    await page.goto(`${rt.url}/kiosk?token=${KIOSK_TOKEN}&codec=pcm`);
    // Kept for the next start of the browser (an unattended kiosk); connected on load, with no click.
    expect(await page.evaluate(() => localStorage.getItem('kohami-kiosk-token'))).toBe(KIOSK_TOKEN);
    // The token left the address bar (and so the history and any Referer) as the page loaded; the codec stays for a reload.
    expect(page.url()).toBe(`${rt.url}/kiosk?codec=pcm`);
    const got = (type: string, turnId?: string) => log.received.find((l) => l.frame.type === type && (turnId === undefined || l.frame.turnId === turnId));

    // Voice negotiated: microphone s16le 16 kHz in, a rate the page plays out.
    await expect.poll(() => got('session.ready')?.frame, READY_POLL).toMatchObject({ mode: 'voice', audio: { input: { encoding: 'pcm_s16le', sampleRate: 16_000 }, voiceInput: true } });
    // From the page's own record: session.start may go before the test's socket listener is attached.
    expect((await inPage()).filter((l) => l.dir === 'out' && l.frame.type === 'session.start').at(-1)!.frame).toMatchObject({ type: 'session.start', mode: 'voice', audio: { kiosk: { aec: true } } });

    // Speech detected on the microphone's 20 ms frames, and the page says so (from the page's own record: the
    // state lasts as long as the phrase, which a loaded machine may bring and take away between two polls).
    await expect.poll(async () => everShown(await inPage(), 'user_speaking')).toBe(true);
    expect(got('vad')?.frame).toMatchObject({ state: 'speech_started' });
    // Every microphone frame is 20 ms of 16 kHz s16le.
    expect([...log.micFrameBytes]).toEqual([640]);

    // The final caption (the interim one may already hold every word: they stream before the flush).
    await page.locator('#captions p.you:not(.interim)', { hasText: ASKED }).waitFor();
    // Before it, the interim transcript showed as it grew: read from what the page showed right after each frame it
    // handled, not by polling the page — a state that lasts until the final, which a loaded machine may bring
    // between two polls (a run at load 14 waited 30 s for a caption already replaced).
    expect((await inPage()).some((l) => l.dir === 'in' && /^raconte-moi une/.test(l.interimAfter ?? ''))).toBe(true);
    expect(got('transcript.final')?.frame).toMatchObject({ turnId: 'v1', text: ASKED });

    // The spoken reply plays; progress reports reach the runtime (which answers none of them with an error).
    // Playing v1, and saying so — or that the senior speaks over it: the barge-in below, which a loaded machine may bring at once.
    await expect.poll(async () => statesWhilePlaying(await inPage(), 'v1').length).toBeGreaterThan(0);
    expect(statesWhilePlaying(await inPage(), 'v1').every((state) => state === 'speaking' || state === 'user_speaking')).toBe(true);
    await expect.poll(() => log.sent.filter((l) => l.frame.type === 'playback.progress' && (l.frame.playedMs as number) > 0).length).toBeGreaterThanOrEqual(2);
    expect(log.audioFrames()).toBeGreaterThan(0);
    // The first: on a loaded machine the barge-in's own reply (the same story) may already be there too.
    await page.locator('#captions p.kohami', { hasText: 'Il était une fois' }).first().waitFor();

    // The WAV loops back to speech over the reply: a barge-in, the runtime clears, the page goes silent at once
    // (in the very task that handles the clear).
    await expect.poll(() => got('reply.audio.clear', 'v1'), LOOP_BACK_POLL).toBeDefined();
    const handled = (await inPage()).filter((l) => l.dir === 'in' && l.frame.type === 'reply.audio.clear');
    expect(handled.map((l) => ({ turnId: l.frame.turnId, playingAfter: l.playingAfter }))).toEqual([{ turnId: 'v1', playingAfter: '' }]);
    expect(await page.locator('#captions p.kohami.interrupted').count()).toBe(1);
    // What the page reported before it handled the clear.
    const pageLog = await inPage();
    const progress = progressReports(pageLog, 'v1', -Infinity, handled[0]!.at).map((l) => l.frame.playedMs as number);
    expect(progress.at(-1)!).toBeGreaterThan(500);
    // Cut before its end, and never more than has had time to play since its audio began.
    expect(progress.at(-1)!).toBeLessThan(REPLY_MS);
    const audioStartedAt = handledFrame(pageLog, 'reply.audio.start', 'v1')!.at;
    const lastReport = progressReports(pageLog, 'v1').at(-1)!;
    expect(lastReport.frame.playedMs as number).toBeLessThanOrEqual(lastReport.at - audioStartedAt);

    // What the senior heard, from the page's progress reports and the marks, is all the agent is told it said.
    await page.locator('#captions p.you', { hasText: BARGED }).waitFor();
    // The agent's second call (the turns' sub-agent derivations, not streamed, run meanwhile).
    await expect.poll(() => mistral.agentRequests.length).toBeGreaterThanOrEqual(2);
    const messages = mistral.agentRequests.at(-1)!.body.messages as Array<{ role: string; content: unknown }>;
    const told = messages.filter((m) => m.role === 'assistant').map((m) => JSON.stringify(m.content)).join(' ');
    const rate = (got('reply.audio.start', 'v1')!.frame.sampleRate as number) / 1000;
    const marks = log.received.filter((l) => l.frame.type === 'reply.audio.mark' && l.frame.turnId === 'v1').map((l) => l.frame as unknown as { sampleOffset: number; textOffset: number });
    const full = REPLY.join('');
    // The runtime decided on one of the last reports it had before it cleared.
    const candidates = progress.slice(-3).map((ms) => heardText(full, marks, Math.floor(ms * rate)));
    const heard = candidates.find((c) => c !== '' && told.includes(JSON.stringify(c).slice(1, -1)));
    expect(heard, `assistant messages ${told} should hold one of ${JSON.stringify(candidates)}`).toBeDefined();
    expect(told).not.toContain(REPLY.at(-1)!.trim());

    // Once the page handled the clear, it reported nothing more of v1, while it went on reporting the
    // next reply's progress (so the silence about v1 is not a silent page).
    await expect.poll(async () => (await inPage()).some((l) => l.dir === 'out' && l.frame.type === 'playback.progress' && l.frame.turnId !== 'v1')).toBe(true);
    const afterClear = await inPage();
    const clearIndex = afterClear.findIndex((l) => l.dir === 'in' && l.frame.type === 'reply.audio.clear' && l.frame.turnId === 'v1');
    expect(afterClear.slice(clearIndex + 1).filter((l) => l.dir === 'out' && l.frame.turnId === 'v1' && (l.frame.type === 'playback.progress' || l.frame.type === 'playback.done'))).toEqual([]);
    expect(log.sent.some((l) => l.frame.type === 'playback.done' && l.frame.turnId === 'v1')).toBe(false);

    expect(log.received.filter((l) => l.frame.type === 'error')).toEqual([]);
    expect(errors).toEqual([]);
  }, REAL_TIME_TEST_MS);

  it('the interrupt button stops the reply now and tells the runtime how much was played', async () => {
    const page = await browser.newPage();
    const inPage = await recordInPage(page);
    const log = recordPageSocket(page);
    await page.goto(`${rt.url}/kiosk?token=${KIOSK_TOKEN}`);
    await expect.poll(() => log.received.find((l) => l.frame.type === 'session.ready')?.frame, READY_POLL).toMatchObject({ mode: 'voice' });
    // Muted: the looping microphone cannot barge in on its own.
    await page.click('#mic');
    await page.waitForSelector('#state[data-state="muted"]');
    expect((await inPage()).filter((l) => l.dir === 'out').at(-1)!.frame).toEqual({ type: 'mic', muted: true });

    await page.fill('#typed', 'raconte-moi encore une histoire');
    await page.click('#send');
    const typed = (await inPage()).find((l) => l.dir === 'out' && l.frame.type === 'turn')!.frame;
    await page.locator('#captions p.you', { hasText: 'raconte-moi encore une histoire' }).waitFor();
    await page.waitForSelector(`body[data-playing="${String(typed.turnId)}"]`);
    // Some of it has played, by the page's own reports.
    const reported = async () => progressReports(await inPage(), String(typed.turnId));
    await expect.poll(async () => (await reported()).at(-1)?.frame.playedMs).toBeGreaterThan(300);
    // The button's handler silences the page before it returns.
    expect(await page.isEnabled('#interrupt')).toBe(true);
    expect(await page.$eval('#interrupt', (button) => ((button as HTMLButtonElement).click(), document.body.dataset.playing))).toBe('');
    const pageLog = await inPage();
    const interrupt = pageLog.find((l) => l.dir === 'out' && l.frame.type === 'interrupt')!;
    expect(interrupt.frame).toMatchObject({ turnId: typed.turnId });
    // What had played: no less than the last report, no more than the time since the turn's audio
    // began, and not the whole reply (it was still playing).
    const audioStartedAt = pageLog.find((l) => l.dir === 'in' && l.frame.type === 'reply.audio.start' && l.frame.turnId === typed.turnId)!.at;
    expect(interrupt.frame.playedMs as number).toBeGreaterThanOrEqual((await reported()).at(-1)!.frame.playedMs as number);
    expect(interrupt.frame.playedMs as number).toBeLessThanOrEqual(interrupt.at - audioStartedAt);
    expect(interrupt.frame.playedMs as number).toBeLessThan(REPLY_MS);
    expect(pageLog.some((l) => l.dir === 'out' && l.frame.type === 'playback.done' && l.frame.turnId === typed.turnId)).toBe(false);
    // The runtime stops the turn's audio too.
    await expect.poll(() => log.received.some((l) => l.frame.type === 'reply.audio.clear' && l.frame.turnId === typed.turnId)).toBe(true);
  }, REAL_TIME_TEST_MS);

  it('an audio setup slower than VOICE_SETUP_MS (a loaded kiosk): the page talks in text meanwhile, then turns its voice on by itself, the same session, and speaks', async () => {
    mistral.mode = { kind: 'stream', chunks: REPLY };
    const page = await browser.newPage();
    // The microphone is granted only once the page has given up waiting for it and connected in text: late,
    // whatever the machine's speed.
    await page.addInitScript(() => {
      const media = navigator.mediaDevices;
      const getUserMedia = media.getUserMedia.bind(media);
      let late = true;
      media.getUserMedia = async (constraints) => {
        if (late) {
          late = false;
          await new Promise<void>((resolve) => {
            const inText = () =>
              document.body?.dataset.audio === 'blocked' && document.getElementById('status')?.dataset.link === 'connected' && (observer.disconnect(), resolve());
            const observer = new MutationObserver(inText);
            observer.observe(document, { attributes: true, subtree: true, attributeFilter: ['data-audio', 'data-link'] });
          });
        }
        return getUserMedia(constraints);
      };
    });
    const inPage = await recordInPage(page);
    const log = recordPageSocket(page);
    await page.goto(`${rt.url}/kiosk?token=${KIOSK_TOKEN}&codec=pcm`);

    // No click: the voice comes on when its setup ends, on a new connection asking the session back.
    await page.waitForSelector('body[data-audio="on"]', { timeout: VOICE_SETUP_MS + READY_POLL.timeout });
    await expect.poll(() => log.received.find((l) => l.frame.type === 'session.ready')?.frame, READY_POLL).toMatchObject({ mode: 'voice', resumed: true });
    const readies = (await inPage()).filter((l) => l.dir === 'in' && l.frame.type === 'session.ready').map((l) => l.frame);
    expect(readies.map((f) => f.mode ?? 'text')).toEqual(['text', 'voice']);
    expect(readies[1]!.sessionId).toBe(readies[0]!.sessionId);
    const starts = (await inPage()).filter((l) => l.dir === 'out' && l.frame.type === 'session.start').map((l) => l.frame);
    expect(starts.at(-1)).toMatchObject({ mode: 'voice', resume: true });
    await page.waitForSelector('#status[data-link="connected"]');
    expect(await page.textContent('#notice')).not.toContain('Touchez');

    // Muted (the looping microphone stays out of it): a typed turn is answered aloud, heard playing.
    await page.click('#mic');
    await expect.poll(async () => (await inPage()).filter((l) => l.dir === 'out').at(-1)?.frame).toEqual({ type: 'mic', muted: true });
    await page.fill('#typed', 'raconte-moi une histoire');
    await page.press('#typed', 'Enter');
    await expect.poll(() => log.sent.some((l) => l.frame.type === 'playback.progress' && (l.frame.playedMs as number) > 0), { timeout: REAL_TIME_TEST_MS / 2 }).toBe(true);
    expect(log.audioFrames()).toBeGreaterThan(0);
  }, REAL_TIME_TEST_MS);

  it('speech with no word over the reply pauses it where it is; it resumes from there, not cut (a false interruption)', async () => {
    // The question has words; the looping microphone's next speech gets none from the recognizer: noise.
    voxtral.utterances.splice(0, voxtral.utterances.length, { text: ASKED }, { text: '' }, { text: '' });
    mistral.mode = { kind: 'stream', chunks: REPLY };
    const page = await browser.newPage();
    const errors: string[] = [];
    page.on('pageerror', (e) => errors.push(e.message));
    const inPage = await recordInPage(page);
    const log = recordPageSocket(page);
    await page.goto(`${rt.url}/kiosk?token=${KIOSK_TOKEN}`);
    const got = (type: string, turnId?: string) => log.received.find((l) => l.frame.type === type && (turnId === undefined || l.frame.turnId === turnId));
    /** When the page handled the runtime's `type` frame for the turn, and what it showed as paused right after (the very task, whatever the machine's speed). */
    const handled = async (type: string) => handledFrame(await inPage(), type, turnId);
    await expect.poll(() => got('transcript.final')?.frame, { timeout: 15_000 }).toMatchObject({ text: ASKED });
    const turnId = got('transcript.final')!.frame.turnId as string;
    // The reply's first audio: the agent and the voice, then Chromium's playback (10 s was too little at load 15).
    await page.waitForSelector(`body[data-playing="${turnId}"]`, { timeout: 30_000 });

    await expect.poll(() => got('reply.audio.pause', turnId), LOOP_BACK_POLL).toBeDefined();
    await expect.poll(async () => (await handled('reply.audio.pause'))?.pausedAfter).toBe(turnId);
    await expect.poll(() => got('reply.audio.resume', turnId), { timeout: 20_000 }).toBeDefined();
    await expect.poll(async () => (await handled('reply.audio.resume'))?.pausedAfter).toBe('');
    const pausedAt = (await handled('reply.audio.pause'))!.at;
    const resumedAt = (await handled('reply.audio.resume'))!.at;
    const played = async (from: number, to = Infinity) => progressReports(await inPage(), turnId, from, to).map((l) => l.frame.playedMs as number);

    // While paused the page kept reporting, and the speaker's position did not move (the first 150 ms are
    // the playback context's suspension settling), then it went on from there. How many reports fall in
    // the pause is the machine's: at load 12 a pause held one, on the page's own clock.
    const during = await played(pausedAt + 150, resumedAt);
    expect(during.length, `reports while paused for ${Math.round(resumedAt - pausedAt)} ms`).toBeGreaterThanOrEqual(1);
    expect(new Set(during).size).toBe(1);
    await expect.poll(async () => (await played(resumedAt)).at(-1) ?? 0, { timeout: 5000 }).toBeGreaterThan(during[0]! + 300);
    await page.waitForSelector(`body[data-playing="${turnId}"]`);
    expect(got('reply.audio.clear', turnId)).toBeUndefined();
    expect(await page.locator('#captions p.kohami.interrupted').count()).toBe(0);
    expect(errors).toEqual([]);
  }, REAL_TIME_TEST_MS);
});

describe('npm run kiosk -- --voice', () => {
  const cli = (args: string[], url = rt.wsUrl) =>
    run(process.execPath, ['runtime/cli/kiosk.ts', '--url', url, ...args], { cwd: process.cwd(), timeout: REAL_TIME_TEST_MS }).then(
      (r) => ({ code: 0, ...r }),
      (e: { code: number; stdout: string; stderr: string }) => ({ code: e.code, stdout: e.stdout, stderr: e.stderr }),
    );

  it('streams a WAV as the microphone and writes the spoken reply to --out', async () => {
    // Its own senior: the page's session belongs to Marie.
    const seniorId = await rt.directory.createSenior({ displayName: 'Jeanne', preferredName: 'Jeanne', onboardingDone: true });
    for (const category of CONSENT_CATEGORIES) await rt.consents.grant(seniorId, category);
    const token = generateToken('kiosk');
    await rt.directory.addDevice(seniorId, token);
    voxtral.utterances.splice(0, voxtral.utterances.length, { text: ASKED });
    mistral.mode = { kind: 'stream', chunks: ['Avec plaisir. ', 'Le jardin est en fleurs.'] };
    const input = path.join(dir, 'question.wav');
    const output = path.join(dir, 'reply.wav');
    const audio = await speechScript(['Raconte-moi une histoire sur le jardin.']);
    await writeFile(input, writeWav({ sampleRate: 16_000, samples: audio.pcm }));

    const { code, stdout, stderr } = await cli(['--token', token, '--voice', input, '--out', output, '--tail-ms', String(DEFAULT_TAIL_MS)]);
    expect(stderr).toBe('');
    expect(code).toBe(0);
    expect(stdout).toContain('[vad speech_started]');
    expect(stdout).toContain(`vous> ${ASKED}`);
    expect(stdout).toContain('kohami> Avec plaisir. Le jardin est en fleurs.');
    const reply = readWav(new Uint8Array(await readFile(output)), 24_000);
    // The fake speaks 60 ms per character of each sentence.
    expect(reply.samples.length / 24_000).toBeGreaterThan(1.5);
    expect(reply.samples.some((s) => Math.abs(s) > 1000)).toBe(true);
  }, REAL_TIME_TEST_MS);

  it('refuses a WAV in another format and says how to convert it', async () => {
    const stereo = path.join(dir, 'stereo.wav');
    const wav = writeWav({ sampleRate: 44_100, samples: new Int16Array(4410) });
    new DataView(wav.buffer).setUint16(22, 2, true);
    await writeFile(stereo, wav);
    const { code, stderr } = await cli(['--token', KIOSK_TOKEN, '--voice', stereo]);
    expect(code).toBe(2);
    expect(stderr).toContain('2 channel(s), 44100 Hz');
    expect(stderr).toContain('sox IN.wav -r 16000 -c 1 -b 16');
    expect(stderr).toContain('ffmpeg -i IN.wav -ar 16000 -ac 1 -c:a pcm_s16le');
  }, REAL_TIME_TEST_MS);

  it('offline (no key): the CLI says voice input needs MISTRAL_API_KEY; the page says so in plain words and speaks typed turns', async () => {
    const offline = await startTestRuntime();
    try {
      const { code, stderr } = await cli(['--token', KIOSK_TOKEN, '--voice', micWav], offline.wsUrl);
      expect(code).toBe(3);
      expect(stderr).toContain('MISTRAL_API_KEY');

      const page = await browser.newPage();
      const log = recordPageSocket(page);
      await page.goto(`${offline.url}/kiosk?token=${KIOSK_TOKEN}`);
      // The senior is told to write, not which key the runtime lacks.
      await expect.poll(() => page.textContent('#notice')).toContain('écrivez vos messages');
      expect(await page.textContent('#notice')).not.toContain('MISTRAL');
      expect(await page.isDisabled('#mic')).toBe(true);
      await page.fill('#typed', 'bonjour');
      await page.press('#typed', 'Enter');
      // espeak-ng speaks the reply: it plays to the end and the page says so — after the greeting, each
      // synthesized and played in real time (past the default poll's 15 s at load 9: a bound, not a speed).
      await expect.poll(() => log.sent.some((l) => l.frame.type === 'playback.done'), { timeout: REAL_TIME_TEST_MS / 2 }).toBe(true);
      expect(log.audioFrames()).toBeGreaterThan(0);
      expect(await page.locator('#captions p.kohami').count()).toBe(1);
      await page.close();
    } finally {
      await offline.close();
    }
  }, REAL_TIME_TEST_MS);
});
