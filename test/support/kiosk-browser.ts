import { writeFile } from 'node:fs/promises';
import path from 'node:path';
import { chromium, type Browser, type Page, type WebSocket as PageSocket } from 'playwright-core';
import { writeWav } from '@kohami/kiosk-client/node';
import { decodeFrameHeader } from '../../runtime/protocol/frame-header.ts';
import { fakeSpeechDurationMs } from './fake-voxtral.ts';
import { speechScript } from './speech.ts';

/** Debian's Chromium (`apt-get install -y chromium`; `npm test` installs it when missing). */
const CHROMIUM = '/usr/bin/chromium';

/**
 * Headless Chromium whose fake microphone plays `micWav` (looped), with media allowed and, unless
 * `autoplay` is false, sound before any gesture (a kiosk started as docs/voice.md says); with it false,
 * Chromium's own policy, as in a browser nobody set up: no sound until the page is clicked.
 */
export function launchKioskBrowser(micWav: string, { autoplay = true } = {}): Promise<Browser> {
  return chromium.launch({
    executablePath: CHROMIUM,
    args: [
      '--no-sandbox', '--disable-gpu', '--disable-quic', '--no-first-run', '--disable-background-networking', '--disable-component-update', '--disable-sync',
      '--use-fake-ui-for-media-stream', '--use-fake-device-for-media-stream', `--use-file-for-fake-audio-capture=${micWav}`,
      ...(autoplay ? ['--autoplay-policy=no-user-gesture-required'] : []),
    ],
  });
}

export type Logged = { at: number; frame: Record<string, unknown> & { type: string } };

/** Every JSON frame sent and received on one of the page's sockets, timestamped; the binary frames' sizes. */
function recordSocket(socket: PageSocket) {
  const sent: Logged[] = [];
  const received: Logged[] = [];
  let audioFrames = 0;
  const replyPayloadBytes: number[] = [];
  const micFrameBytes = new Set<number>();
  socket.on('framesent', ({ payload }) => {
    if (typeof payload === 'string') sent.push({ at: performance.now(), frame: JSON.parse(payload) });
    else micFrameBytes.add(payload.length);
  });
  socket.on('framereceived', ({ payload }) => {
    if (typeof payload === 'string') received.push({ at: performance.now(), frame: JSON.parse(payload) });
    else {
      // The header is the same for PCM and Opus.
      const bytes = decodeFrameHeader(new Uint8Array(payload)).payload.length;
      replyPayloadBytes.push(bytes);
      if (bytes > 0) audioFrames += 1;
    }
  });
  return { sent, received, audioFrames: () => audioFrames, micFrameBytes, replyPayloadBytes };
}

export type SocketLog = ReturnType<typeof recordSocket>;

/**
 * The page's kiosk socket as the page uses it now: the latest one it opened (empty until then). A page
 * connects again without being told to: when its audio takes longer than `VOICE_SETUP_MS` to set up (a
 * loaded machine) it talks in text at once, then asks its session back with its voice on a new socket
 * (kiosk.js `openVoice`). Call before `goto`.
 */
export function recordPageSocket(page: Page): SocketLog {
  let current: SocketLog = { sent: [], received: [], audioFrames: () => 0, micFrameBytes: new Set(), replyPayloadBytes: [] };
  page.on('websocket', (socket) => (current = recordSocket(socket)));
  return {
    get sent() {
      return current.sent;
    },
    get received() {
      return current.received;
    },
    audioFrames: () => current.audioFrames(),
    get micFrameBytes() {
      return current.micFrameBytes;
    },
    get replyPayloadBytes() {
      return current.replyPayloadBytes;
    },
  };
}

/** Said by the fake recognizer for each utterance it is flushed, in order (what the WAV says is not read). */
export const ASKED = 'raconte-moi une histoire sur le jardin';
/**
 * How the page's runtime ends an utterance: on the WAV's trailing silence (700 ms), with no early flush.
 * The recognizer is scripted with word times of its own (Chromium's fake microphone may run faster than
 * real time), which do not match the phrase's inner pause; an early flush there would take the whole
 * script for the sentence's first part. Turn-taking itself: the turn-taking machine's unit tests and voice-early-flush.
 */
export const PAGE_ENDPOINT = { ENDPOINT_SILENCE_MS: '700', STT_EARLY_FLUSH_MS: '0' } as const;
export const BARGED = 'attends je voudrais te dire autre chose';
/** The agent's reply: at 60 ms of fake speech per character, about 12 s, still playing when the WAV loops back to speech. */
export const REPLY = [
  'Bien sûr, Marie. ',
  'Il était une fois un grand jardin au bord de la rivière. ',
  'Les tomates y poussaient au soleil, à côté des haricots et des fraises. ',
  'Chaque matin, la jardinière arrosait les fleurs en chantant.',
];
export const REPLY_MS = REPLY.reduce((ms, piece) => ms + fakeSpeechDurationMs(piece), 0);
/**
 * The microphone's silence after the phrase, before Chromium loops the WAV back to it: it ends the
 * utterance (ENDPOINT_SILENCE_MS, 700 ms), then leaves the reply seconds to start playing, however
 * slow the machine, before the phrase comes again over it; under REPLY_MS, so the reply still plays
 * when it does. 5 s was too little at load 12–21: a reply that began 4.3 s after the phrase was cut
 * 11 ms into it, before the page had heard any of it.
 */
export const MIC_SILENCE_MS = 8000;
/**
 * How long a test waits for the phrase's return over a reply to cut it (`reply.audio.clear`): the loop's
 * silence, then the phrase heard, ended and transcribed, all of it stretched on a loaded machine.
 */
export const LOOP_BACK_POLL = { timeout: MIC_SILENCE_MS + 30_000 };

/** The fake microphone's file, written in `dir`: a French phrase, then a silence long enough to end the utterance; Chromium loops it. */
export async function writeMicWav(dir: string): Promise<string> {
  const audio = await speechScript([{ silenceMs: 300 }, 'Raconte-moi une histoire sur le jardin, s’il te plaît.', { silenceMs: MIC_SILENCE_MS }]);
  const micWav = path.join(dir, 'micro.wav');
  await writeFile(micWav, writeWav({ sampleRate: 16_000, samples: audio.pcm }));
  return micWav;
}

/** A JSON frame the page's kiosk socket sent (`out`) or handled (`in`), with what the page showed right after handling it. */
export type PageLogged = {
  at: number;
  dir: 'in' | 'out';
  frame: Record<string, unknown> & { type: string };
  playingAfter?: string;
  pausedAfter?: string;
  interimAfter?: string;
  stateAfter?: string;
};

/**
 * Records, inside the page (call before it loads), every JSON frame its kiosk socket sends and every one
 * it handles, with what `body[data-playing]`, the interim caption and `#state` are right after the page's
 * own handler ran. The order and the clock are the page's: `session.start` may go before the test's
 * `framesent` listener is attached, and a state that lasts a moment on a loaded machine (the reply playing
 * until a barge-in) may come and go between two polls of the page — never between two entries here.
 */
export async function recordInPage(page: Page): Promise<() => Promise<PageLogged[]>> {
  await page.addInitScript(() => {
    const log: PageLogged[] = [];
    (window as unknown as { kioskLog: PageLogged[] }).kioskLog = log;
    const send = WebSocket.prototype.send;
    WebSocket.prototype.send = function (this: WebSocket, data) {
      if (typeof data === 'string') log.push({ at: performance.now(), dir: 'out', frame: JSON.parse(data) });
      return send.call(this, data);
    };
    const onmessage = Object.getOwnPropertyDescriptor(WebSocket.prototype, 'onmessage')!;
    Object.defineProperty(WebSocket.prototype, 'onmessage', {
      configurable: true,
      get(this: WebSocket) {
        return onmessage.get!.call(this);
      },
      set(this: WebSocket, handler: ((m: MessageEvent) => unknown) | null) {
        onmessage.set!.call(this, handler && function (this: WebSocket, m: MessageEvent) {
          const result = handler.call(this, m);
          if (typeof m.data === 'string') {
            log.push({
              at: performance.now(),
              dir: 'in',
              frame: JSON.parse(m.data),
              playingAfter: document.body.dataset.playing ?? '',
              pausedAfter: document.body.dataset.paused ?? '',
              interimAfter: document.querySelector('#captions p.you.interim')?.textContent?.trim() ?? '',
              stateAfter: (document.querySelector('#state') as HTMLElement | null)?.dataset.state ?? '',
            });
          }
          return result;
        });
      },
    });
  });
  return () => page.evaluate(() => (window as unknown as { kioskLog: PageLogged[] }).kioskLog);
}

/**
 * The progress reports the page sent for `turnId`, in order, strictly between `from` and `to` on the page's
 * own clock: Playwright's events reach a loaded test process in bursts, a report and the frame it is
 * compared with in either order.
 */
export function progressReports(log: PageLogged[], turnId: string, from = -Infinity, to = Infinity): PageLogged[] {
  return log.filter((l) => l.dir === 'out' && l.frame.type === 'playback.progress' && l.frame.turnId === turnId && l.at > from && l.at < to);
}

/** The page's own record of handling the runtime's `type` frame for `turnId` (the first), if it has. */
export function handledFrame(log: PageLogged[], type: string, turnId: string): PageLogged | undefined {
  return log.find((l) => l.dir === 'in' && l.frame.type === type && l.frame.turnId === turnId);
}

/** What the page showed after each frame it handled: whether it was ever in `state`. */
export function everShown(log: PageLogged[], state: string): boolean {
  return log.some((l) => l.dir === 'in' && l.stateAfter === state);
}

/** The states the page showed after each frame it handled while it was playing `turnId`. */
export function statesWhilePlaying(log: PageLogged[], turnId: string): string[] {
  return log.filter((l) => l.dir === 'in' && l.playingAfter === turnId).map((l) => l.stateAfter ?? '');
}
