import { describe, expect, it } from 'vitest';
import { EarlyFlush } from '../../runtime/voice/early-flush.ts';

/** 16 kHz: `ms` of audio, every sample set to `value` (tells chunks apart). */
const chunk = (ms: number, value: number) => new Int16Array(ms * 16).fill(value);
const samples = (chunks: Int16Array[]) => chunks.reduce((n, c) => n + c.length, 0);

describe('the early flush of a pause', () => {
  it('joins the flushed segments and the current text; an empty flush adds no segment; a failure is kept for the end of turn', () => {
    const early = new EarlyFlush(300);
    expect(early.text(' Une baleine ')).toBe('Une baleine');
    early.begin(true);
    early.settled(' Une baleine ');
    expect(early.text('')).toBe('Une baleine');
    early.release();
    // The senior went on: the next segment's words follow.
    expect(early.text('la lettre U.')).toBe('Une baleine la lettre U.');
    early.begin(true);
    early.settled('  ');
    expect(early.text('')).toBe('Une baleine');
    early.begin(true);
    early.failed(new Error('socket lost'));
    expect(early.failure).toBeInstanceOf(Error);
  });

  it('holds the pause audio bounded to the pre-roll, and hands out exactly its last 300 ms when the senior goes on', () => {
    const early = new EarlyFlush(300);
    early.begin(true);
    expect(early.holding).toBe(true);
    // 2 s of pause in 20 ms chunks, then the chunk where speech came back.
    for (let i = 0; i < 100; i++) early.hold(chunk(20, i));
    const tail = early.release();
    expect(early.holding).toBe(false);
    expect(samples(tail)).toBe(300 * 16);
    // The newest audio, in order: chunks 85 … 99.
    expect(tail.map((c) => c[0])).toEqual(Array.from({ length: 15 }, (_, i) => 85 + i));
  });

  it('a pause shorter than the pre-roll is handed out whole, led by silence to the pre-roll; a chunk that straddles the bound is cut at its start', () => {
    const short = new EarlyFlush(300);
    short.begin(true);
    short.hold(chunk(100, 1));
    const led = short.release();
    expect(samples(led)).toBe(300 * 16);
    expect([...led[0]!].every((s) => s === 0)).toBe(true);
    expect(led[0]!.length).toBe(200 * 16);
    expect(led[1]![0]).toBe(1);
    const odd = new EarlyFlush(300);
    odd.begin(true);
    for (let i = 0; i < 5; i++) odd.hold(chunk(70, i));
    const tail = odd.release();
    expect(samples(tail)).toBe(300 * 16);
    expect(tail[0]!.length).toBe(20 * 16);
    expect(tail.at(-1)![0]).toBe(4);
  });

  it('keeps the whole pause since the first flush for its recheck (bounded), hands it all to the recheck, then holds the pre-roll only', () => {
    const early = new EarlyFlush(300, 3000);
    early.begin(true);
    early.settled('Une dépanneuse');
    // A recognizer slow to answer: 800 ms of pause since the flush before the recheck.
    for (let i = 0; i < 40; i++) early.hold(chunk(20, i + 1));
    const held = early.releaseAll();
    expect(samples(held)).toBe(800 * 16);
    expect(held.map((c) => c[0])).toEqual(Array.from({ length: 40 }, (_, i) => i + 1));
    expect(early.holding).toBe(false);
    // After the recheck the pause's audio is bounded by the pre-roll again.
    early.begin(false);
    for (let i = 0; i < 100; i++) early.hold(chunk(20, i));
    expect(samples(early.release())).toBe(300 * 16);
    // Bounded even when no recheck comes: at most the longest pause.
    const long = new EarlyFlush(300, 3000);
    long.begin(true);
    for (let i = 0; i < 500; i++) long.hold(chunk(20, 1));
    expect(samples(long.releaseAll())).toBeLessThanOrEqual(3020 * 16);
  });

  it('a senior who goes on before the recheck gets exactly the pre-roll, whole chunks of the longer hold dropped first', () => {
    const early = new EarlyFlush(300, 3000);
    early.begin(true);
    for (let i = 0; i < 6; i++) early.hold(chunk(70, i));
    const tail = early.release();
    expect(samples(tail)).toBe(300 * 16);
    // 420 ms held: the first chunk goes whole, the second loses 50 ms at its start.
    expect(tail.map((c) => c[0])).toEqual([1, 2, 3, 4, 5]);
    expect(tail[0]!.length).toBe(20 * 16);
  });
});
