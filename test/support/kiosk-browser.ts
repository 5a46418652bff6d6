import { chromium, type Browser, type WebSocket as PageSocket } from 'playwright-core';
import { decodeFrameHeader } from '../../runtime/protocol/frame-header.ts';

/** Debian's Chromium (`apt-get install -y chromium`; `npm test` installs it when missing). */
const CHROMIUM = '/usr/bin/chromium';

/** Headless Chromium whose fake microphone plays `micWav` (looped), with media and autoplay allowed. */
export function launchKioskBrowser(micWav: string): Promise<Browser> {
  return chromium.launch({
    executablePath: CHROMIUM,
    args: [
      '--no-sandbox', '--disable-gpu', '--disable-quic', '--no-first-run', '--disable-background-networking', '--disable-component-update', '--disable-sync',
      '--use-fake-ui-for-media-stream', '--use-fake-device-for-media-stream', `--use-file-for-fake-audio-capture=${micWav}`, '--autoplay-policy=no-user-gesture-required',
    ],
  });
}

export type Logged = { at: number; frame: Record<string, unknown> & { type: string } };

/** Every JSON frame the page sends and receives on its kiosk socket, timestamped; the binary frames' sizes. */
export function recordSocket(socket: PageSocket) {
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
