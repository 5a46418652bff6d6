import { afterEach, describe, expect, it, vi } from 'vitest';
import { EspeakSpeaker } from '../../adapters/voice/espeak-speaker.ts';
import type { ServerFrame } from '../../runtime/protocol/server-frames.ts';
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

/** A reply of two one-second sentences (« Il fait beau aujourd’hui. », « Allons au marché ensemble. »), all sent. */
async function twoSentences(link: VoiceLink): Promise<ReplyAudio> {
  const r = reply('v1', link);
  r.delta('Il fait beau aujourd’hui. ');
  r.delta('Allons au marché ensemble.');
  r.finish('Il fait beau aujourd’hui. Allons au marché ensemble.');
  await r.sent;
  return r;
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
    const r = await twoSentences(link);
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

describe('ReplyAudio pauses and resumes (a false interruption)', () => {
  it('a pause stops the clock of what was heard and of the playing estimate; resumed, the reply ends that much later', async () => {
    vi.useFakeTimers({ toFake: ['Date', 'performance'] });
    const link = recordingLink();
    // Nothing to pause before any audio went out.
    const early = reply('v0', recordingLink());
    expect(early.pause()).toBe(false);
    early.cancel();
    const r = await twoSentences(link);
    const audioFrames = link.audioFrames;

    vi.advanceTimersByTime(900);
    expect(r.pause()).toBe(true);
    expect(r.pause()).toBe(false);
    expect(r.paused).toBe(true);
    // Paused for 10 s, far past the 2 s reply's estimated end: it still plays (paused), nothing more was heard.
    vi.advanceTimersByTime(10_000);
    expect(r.playing).toBe(true);
    expect(r.heard()).toBe('');
    expect(r.resume()).toBe(true);
    expect(r.resume()).toBe(false);
    expect(r.paused).toBe(false);
    vi.advanceTimersByTime(200);
    expect(r.heard()).toBe('Il fait beau aujourd’hui.');
    // 2 s of audio + 500 ms of slack, counted from the first frame, plus the 10 s paused.
    vi.advanceTimersByTime(1300);
    expect(r.playing).toBe(true);
    vi.advanceTimersByTime(150);
    expect(r.playing).toBe(false);
    expect(link.frames.filter((f) => f.type === 'reply.audio.pause' || f.type === 'reply.audio.resume')).toEqual([
      { type: 'reply.audio.pause', turnId: 'v1' },
      { type: 'reply.audio.resume', turnId: 'v1' },
    ]);
    // Nothing was held back or sent again: the kiosk buffered the audio through the pause.
    expect(link.audioFrames).toBe(audioFrames);
  });

  it('a cancelled reply neither pauses nor resumes; the kiosk’s own report of what played wins over the estimate', async () => {
    vi.useFakeTimers({ toFake: ['Date', 'performance'] });
    const link = recordingLink();
    const r = await twoSentences(link);
    expect(r.pause()).toBe(true);
    vi.advanceTimersByTime(5000);
    r.reportPlayed(1200);
    expect(r.heard()).toBe('Il fait beau aujourd’hui.');
    r.cancel();
    expect(r.paused).toBe(false);
    expect(r.resume()).toBe(false);
    expect(r.playing).toBe(false);
    expect(r.pause()).toBe(false);
  });
});
