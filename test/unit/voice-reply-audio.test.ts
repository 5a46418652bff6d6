import { afterEach, describe, expect, it, vi } from 'vitest';
import { EspeakSpeaker } from '../../adapters/voice/espeak-speaker.ts';
import type { ServerFrame } from '../../runtime/protocol/messages.ts';
import { ReplyAudio, type ReplyAudioOptions } from '../../runtime/voice/reply-audio.ts';
import type { VoiceLink } from '../../runtime/voice/voice-link.ts';

const RATE = 16_000;
/** Every sentence is "pre-synthesized" as one second of tone: no speech service is involved. */
const oneSecond = () => [Int16Array.from({ length: RATE }, (_, i) => Math.round(Math.sin(i / 5) * 8000))];

/** What the kiosk's socket carried; `failAudioAt`: the nth binary frame's send throws (1-based). */
function recordingLink(failAudioAt = Infinity): VoiceLink & { frames: ServerFrame[]; audioFrames: number } {
  const link = {
    frames: [] as ServerFrame[],
    audioFrames: 0,
    unreadBytes: 0,
    send: (frame: ServerFrame) => void link.frames.push(frame),
    sendAudio: () => {
      if (++link.audioFrames === failAudioAt) throw new Error('socket send failed');
    },
  };
  return link;
}

function reply(turnId: string, link: VoiceLink, errors: unknown[] = []): ReplyAudio {
  const options: ReplyAudioOptions = {
    turnId,
    link,
    speaker: new EspeakSpeaker(),
    lines: oneSecond,
    sampleRate: RATE,
    onFirstAudio: () => {},
    onSpeechError: (err) => void errors.push(err),
  };
  return new ReplyAudio(options);
}

afterEach(() => {
  vi.useRealTimers();
});

describe('ReplyAudio.sent never rejects', () => {
  it('a turnId no frame header can carry: the reply ends as a speech error, nothing half-announced', async () => {
    const link = recordingLink();
    const errors: unknown[] = [];
    // 128 « é » = 256 UTF-8 bytes: one more than the header's length byte holds (the kiosk schema refuses it first).
    const r = reply('é'.repeat(128), link, errors);
    r.finish('Bonjour Marie.');
    await expect(r.sent).resolves.toBeUndefined();
    expect(errors).toEqual([expect.objectContaining({ name: 'RangeError', message: expect.stringContaining('255') })]);
    expect(link.frames).toEqual([]);
    expect(r.playing).toBe(false);
  });

  it('a failure after audio went out ends the turn’s audio with what was sent', async () => {
    const link = recordingLink(3);
    const errors: unknown[] = [];
    const r = reply('v1', link, errors);
    r.finish('Bonjour Marie.');
    await expect(r.sent).resolves.toBeUndefined();
    expect(errors).toEqual([expect.objectContaining({ message: 'socket send failed' })]);
    // Two 100 ms frames went out before the third failed: the kiosk hears the start and an end of 200 ms.
    expect(link.frames).toEqual([
      { type: 'reply.audio.start', turnId: 'v1', encoding: 'pcm_s16le', sampleRate: RATE },
      { type: 'reply.audio.end', turnId: 'v1', durationMs: 200 },
    ]);
    // Later text of that turn is not spoken.
    r.delta('Encore une phrase.');
    expect(link.audioFrames).toBe(3);
  });
});

describe('ReplyAudio keeps time on a monotonic clock', () => {
  it('what was heard and whether it still plays do not move when the wall clock steps back', async () => {
    vi.useFakeTimers({ toFake: ['Date', 'performance'] });
    const link = recordingLink();
    const r = reply('v1', link);
    r.delta('Il fait beau aujourd’hui. ');
    r.delta('Allons au marché ensemble.');
    r.finish('Il fait beau aujourd’hui. Allons au marché ensemble.');
    await r.sent;
    expect(link.frames.filter((f) => f.type === 'reply.audio.mark')).toEqual([
      { type: 'reply.audio.mark', turnId: 'v1', sampleOffset: RATE, textOffset: 25 },
      { type: 'reply.audio.mark', turnId: 'v1', sampleOffset: 2 * RATE, textOffset: 52 },
    ]);

    vi.advanceTimersByTime(1500);
    // An NTP step: the wall clock goes back an hour, 1.5 s into a 2 s reply the kiosk reports nothing about.
    vi.setSystemTime(Date.now() - 3_600_000);
    expect(r.heard()).toBe('Il fait beau aujourd’hui.');
    expect(r.playing).toBe(true);
    vi.advanceTimersByTime(1100);
    expect(r.playing).toBe(false);
    expect(r.heard()).toBe('Il fait beau aujourd’hui. Allons au marché ensemble.');
  });
});
