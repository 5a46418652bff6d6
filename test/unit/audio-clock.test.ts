import { describe, expect, it } from 'vitest';
import { AudioClock } from '../support/audio-clock.ts';

const RATE = 16_000;
/** Deterministic "room noise" and speech: no two 10 ms stretches alike. */
function audio(samples: number, silentUntil = 0): Int16Array {
  const pcm = new Int16Array(samples);
  let x = 12345;
  for (let i = silentUntil; i < samples; i++) {
    x = (Math.imul(x, 1103515245) + 12345) >>> 0;
    pcm[i] = ((x >>> 16) % 2000) - 1000;
  }
  return pcm;
}

describe('AudioClock', () => {
  it('places chunks cut anywhere, in order, by where they end in the audio', () => {
    const pcm = audio(RATE);
    const clock = new AudioClock(RATE);
    clock.set(pcm);
    // The listener's first chunk starts mid-audio (its pre-roll), then goes on contiguously.
    expect(clock.heard(pcm.subarray(4800, 8000))).toBe(500);
    expect(clock.heard(pcm.subarray(8000, 8320))).toBe(520);
    expect(clock.heard(pcm.subarray(8320, 8333))).toBeCloseTo(520.8125);
  });

  it('finds the next segment after a gap, led by silence the audio does not hold', () => {
    const pcm = audio(RATE);
    const clock = new AudioClock(RATE);
    clock.set(pcm);
    clock.heard(pcm.subarray(0, 3200));
    const padded = new Int16Array(2000 + 1600);
    padded.set(pcm.subarray(9600, 11200), 2000);
    expect(clock.heard(padded)).toBe(700);
  });

  it('cannot place digital silence, nor audio from elsewhere', () => {
    const pcm = audio(RATE, 8000);
    const clock = new AudioClock(RATE);
    clock.set(pcm);
    expect(clock.heard(new Int16Array(320))).toBeUndefined();
    expect(clock.heard(audio(320).map((s) => s ^ 1))).toBeUndefined();
    // Placed once, the silence that follows on is placed too.
    expect(clock.heard(pcm.subarray(7680, 8320))).toBe(520);
  });

  it('starts over for a new utterance', () => {
    const first = audio(RATE);
    const second = audio(RATE).reverse();
    const clock = new AudioClock(RATE);
    clock.set(first);
    clock.heard(first.subarray(0, 9600));
    clock.set(second);
    expect(clock.heard(second.subarray(1600, 3200))).toBe(200);
  });
});
