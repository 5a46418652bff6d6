import { afterEach, beforeAll, describe, expect, it, vi } from 'vitest';
import { Listener } from '../../machines/voice/listener.ts';
import { SileroSpeechProbability, SileroUnavailableError, STALL_MS, stopSileroWorker } from '../../adapters/voice/silero-vad.ts';
import { WebRtcVoiceGate } from '../../adapters/voice/webrtc-vad.ts';
import { chunks, samplesToMs, speechScript, type ScriptedAudio } from '../support/speech.ts';

const WINDOW = 512;
let a: ScriptedAudio;
let b: ScriptedAudio;
let c: ScriptedAudio;

beforeAll(async () => {
  a = await speechScript([{ silenceMs: 300 }, 'Bonjour, je voudrais parler de mon petit-fils.', { silenceMs: 800 }]);
  b = await speechScript([{ silenceMs: 100 }, 'Ma fille viendra dimanche avec les enfants.', { silenceMs: 1000 }]);
  c = await speechScript([{ silenceMs: 300 }, 'Bonjour, je voudrais parler de mon petit-fils.', { silenceMs: 1500 }]);
});

afterEach(() => {
  vi.useRealTimers();
});

const windowsOf = (pcm: Int16Array, count: number): Int16Array[] =>
  Array.from({ length: count }, (_, i) => pcm.slice(i * WINDOW, (i + 1) * WINDOW));

/** One stream's probabilities, one window at a time, on a stream of its own. */
async function alone(windows: Int16Array[]): Promise<number[]> {
  const silero = await SileroSpeechProbability.create();
  const out: number[] = [];
  for (const w of windows) out.push(await silero.probability(w));
  silero.close();
  return out;
}

describe('Silero in its worker, batched across streams', () => {
  it('gives every stream of a batch exactly what it gets alone (state and context never cross streams)', async () => {
    const count = 60;
    const inputs = [windowsOf(a.pcm, count), windowsOf(b.pcm, count), windowsOf(a.pcm.subarray(7 * WINDOW), count)];
    const expected = [await alone(inputs[0]!), await alone(inputs[1]!), await alone(inputs[2]!)];
    expect(Math.max(...expected[0]!)).toBeGreaterThan(0.5); // real speech in there, not all zeros
    const streams = await Promise.all(inputs.map(() => SileroSpeechProbability.create()));
    const got: number[][] = [[], [], []];
    for (let i = 0; i < count; i++) {
      // All three in flight together: the worker answers them in one inference.
      const ps = await Promise.all(streams.map((s, k) => s.probability(inputs[k]![i]!)));
      ps.forEach((p, k) => got[k]!.push(p));
    }
    expect(got).toEqual(expected);
    for (const s of streams) s.close();
  });

  it('reset() starts the stream over, even with a window in flight; a reused slot starts from zero', async () => {
    const windows = windowsOf(a.pcm, 30);
    const fresh = await alone(windows.slice(15));
    const silero = await SileroSpeechProbability.create();
    for (const w of windows.slice(0, 14)) await silero.probability(w);
    const inFlight = silero.probability(windows[14]!);
    silero.reset();
    await inFlight;
    const after: number[] = [];
    for (const w of windows.slice(15)) after.push(await silero.probability(w));
    expect(after).toEqual(fresh);
    // Its slot, handed to the next stream, carries none of this stream's state.
    silero.close();
    await expect(silero.probability(windows[0]!)).rejects.toThrow(/close/);
    expect(await alone(windows.slice(15))).toEqual(fresh);
  });

  it('refuses a wrong window and two windows at once on one stream', async () => {
    const silero = await SileroSpeechProbability.create();
    await expect(silero.probability(new Int16Array(100))).rejects.toThrow(/512/);
    const first = silero.probability(new Int16Array(WINDOW));
    await expect(silero.probability(new Int16Array(WINDOW))).rejects.toThrow(/one window at a time/);
    expect(await first).toBeGreaterThanOrEqual(0);
    silero.close();
  });

  it(`gives up a worker that leaves a window unanswered for ${STALL_MS} ms; the next stream gets a new worker`, async () => {
    stopSileroWorker();
    vi.useFakeTimers({ toFake: ['setInterval', 'clearInterval', 'setTimeout', 'clearTimeout', 'performance'] });
    // 1000 streams' windows at once, ~100 ms of inference, while the clock jumps 1.25 s: the worker
    // answers the first few while they are being sent, the rest are late.
    const streams = await Promise.all(Array.from({ length: 1000 }, () => SileroSpeechProbability.create()));
    const window = a.pcm.slice(0, WINDOW);
    const waiting = streams.map((s) => s.probability(window));
    vi.advanceTimersByTime(STALL_MS + STALL_MS / 4);
    const settled = await Promise.allSettled(waiting);
    const late = settled.filter((r) => r.status === 'rejected');
    expect(late.every((r) => r.reason instanceof SileroUnavailableError)).toBe(true);
    expect(late.length).toBeGreaterThan(500);
    const stuck = streams.at(-1)!;
    expect(settled.at(-1)!.status).toBe('rejected');
    expect(stuck.available).toBe(false);
    // Later windows of its streams are refused at once, without waiting.
    await expect(stuck.probability(window)).rejects.toBeInstanceOf(SileroUnavailableError);
    vi.useRealTimers();
    const next = await SileroSpeechProbability.create();
    expect(next.available).toBe(true);
    expect(await next.probability(window)).toEqual((await alone([window]))[0]);
    next.close();
    for (const s of streams) s.close();
  });

  it('a listener whose worker dies mid-utterance goes on with the WebRTC gate alone and reports it once', async () => {
    const gate = await WebRtcVoiceGate.create();
    const silero = await SileroSpeechProbability.create();
    const events: string[] = [];
    const at: number[] = [];
    let received = 0;
    const listener = new Listener(
      { gate, detector: silero, endpointSilenceMs: 700, minSpeechMs: 250, preRollMs: 300, maxUtteranceMs: 30_000 },
      {
        speechStarted: () => (events.push('started'), at.push(samplesToMs(received))),
        audio: () => undefined,
        speechStopped: (reason) => (events.push(reason), at.push(samplesToMs(received))),
      },
    );
    const truth = c.speech[0]!;
    const failures: unknown[] = [];
    for (const [i, chunk] of chunks(c.pcm, 20).entries()) {
      received += chunk.length;
      // Killed once Silero has confirmed speech, 300 ms into the sentence.
      if (i === Math.round((truth.startMs + 300) / 20)) stopSileroWorker();
      await listener.push(chunk).catch((err: unknown) => failures.push(err));
    }
    expect(events).toEqual(['started', 'silence']);
    expect(failures).toHaveLength(1);
    expect(failures[0]).toBeInstanceOf(SileroUnavailableError);
    // The gate alone still ends the utterance after the endpointing silence.
    expect(at[1]).toBeGreaterThanOrEqual(truth.endMs + 650);
    expect(at[1]).toBeLessThanOrEqual(truth.endMs + 700 + 250);
    // And hears the next one.
    for (const chunk of chunks(b.pcm, 20)) await listener.push(chunk);
    expect(events).toEqual(['started', 'silence', 'started', 'silence']);
    gate.close();
  });
});
