import { describe, expect, it } from 'vitest';
import { EarlyFlush } from '../../runtime/voice/early-flush.ts';

/** 16 kHz: `ms` of audio, every sample set to `value` (tells chunks apart). */
const chunk = (ms: number, value: number) => new Int16Array(ms * 16).fill(value);
const samples = (chunks: Int16Array[]) => chunks.reduce((n, c) => n + c.length, 0);

describe('the early flush of a pause', () => {
  it('joins the flushed segments and the current text, and is final only for the pause it flushed in', () => {
    const early = new EarlyFlush(300);
    expect(early.text(' Une baleine ')).toBe('Une baleine');
    early.begin(1);
    early.pending = Promise.resolve();
    expect(early.finalFor(1)).toBe(false);
    early.settled(' Une baleine ');
    expect(early.finalFor(1)).toBe(true);
    expect(early.finalFor(2)).toBe(false);
    expect(early.text('')).toBe('Une baleine');
    early.release();
    // The senior went on: the next segment's words follow, and the text is no longer final.
    expect(early.finalFor(1)).toBe(false);
    expect(early.text('la lettre U.')).toBe('Une baleine la lettre U.');
    early.begin(2);
    early.settled('la lettre U.');
    expect(early.text('')).toBe('Une baleine la lettre U.');
  });

  it('an empty flush adds no segment; a failed one is not final', () => {
    const early = new EarlyFlush(300);
    early.begin(1);
    early.settled('  ');
    expect(early.text('')).toBe('');
    early.begin(2);
    early.failed(new Error('socket lost'));
    expect(early.finalFor(2)).toBe(false);
    expect(early.failure).toBeInstanceOf(Error);
  });

  it('holds the pause audio bounded to the pre-roll, and hands out exactly its last 300 ms when the senior goes on', () => {
    const early = new EarlyFlush(300);
    early.begin(1);
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
    short.begin(1);
    short.hold(chunk(100, 1));
    const led = short.release();
    expect(samples(led)).toBe(300 * 16);
    expect([...led[0]!].every((s) => s === 0)).toBe(true);
    expect(led[0]!.length).toBe(200 * 16);
    expect(led[1]![0]).toBe(1);
    const odd = new EarlyFlush(300);
    odd.begin(1);
    for (let i = 0; i < 5; i++) odd.hold(chunk(70, i));
    const tail = odd.release();
    expect(samples(tail)).toBe(300 * 16);
    expect(tail[0]!.length).toBe(20 * 16);
    expect(tail.at(-1)![0]).toBe(4);
  });

  it('asks once more in a pause whose flushed text did not close the sentence, and never for a closed one', () => {
    const open = new EarlyFlush(300);
    open.begin(1);
    open.pending = Promise.resolve();
    expect(open.recheckDue(1)).toBe(false);
    open.settled('Une dépanneuse');
    expect(open.recheckDue(1)).toBe(true);
    expect(open.recheckDue(2)).toBe(false);
    // The recheck: the pause's audio goes ahead, and the pause's second flush is its last. While it is
    // under way, the first flush's text is still the final one (a slow answer must not undo it).
    open.release();
    open.begin(1);
    open.pending = Promise.resolve();
    expect(open.finalFor(1)).toBe(true);
    expect(open.recheckDue(1)).toBe(false);
    open.settled('multicolore.');
    expect(open.text('')).toBe('Une dépanneuse multicolore.');
    expect(open.recheckDue(1)).toBe(false);
    // An unfinished ending (« de ») is not closed either; the next pause starts its count again.
    open.release();
    open.begin(2);
    open.settled('avec une tasse de');
    expect(open.recheckDue(2)).toBe(true);
    const closed = new EarlyFlush(300);
    closed.begin(1);
    closed.settled('Tu viens demain ?');
    expect(closed.recheckDue(1)).toBe(false);
    // Nothing said yet is no sentence to close, but an empty flush is asked again too: the words may be past it.
    const empty = new EarlyFlush(300);
    empty.begin(1);
    empty.settled('');
    expect(empty.recheckDue(1)).toBe(true);
    const failed = new EarlyFlush(300);
    failed.begin(1);
    failed.failed(new Error('socket lost'));
    expect(failed.recheckDue(1)).toBe(false);
  });

  it('keeps the whole pause since the first flush for its recheck (bounded), hands it all to the recheck, then holds the pre-roll only', () => {
    const early = new EarlyFlush(300, 3000);
    early.begin(1);
    early.settled('Une dépanneuse');
    // A recognizer slow to answer: 800 ms of pause since the flush before the recheck.
    for (let i = 0; i < 40; i++) early.hold(chunk(20, i + 1));
    const held = early.releaseAll();
    expect(samples(held)).toBe(800 * 16);
    expect(held.map((c) => c[0])).toEqual(Array.from({ length: 40 }, (_, i) => i + 1));
    expect(early.holding).toBe(false);
    // After the recheck the pause's audio is bounded by the pre-roll again.
    early.begin(1);
    for (let i = 0; i < 100; i++) early.hold(chunk(20, i));
    expect(samples(early.release())).toBe(300 * 16);
    // Bounded even when no recheck comes: at most the longest pause.
    const long = new EarlyFlush(300, 3000);
    long.begin(1);
    for (let i = 0; i < 500; i++) long.hold(chunk(20, 1));
    expect(samples(long.releaseAll())).toBeLessThanOrEqual(3020 * 16);
  });

  it('a senior who goes on before the recheck gets exactly the pre-roll, whole chunks of the longer hold dropped first', () => {
    const early = new EarlyFlush(300, 3000);
    early.begin(1);
    for (let i = 0; i < 6; i++) early.hold(chunk(70, i));
    const tail = early.release();
    expect(samples(tail)).toBe(300 * 16);
    // 420 ms held: the first chunk goes whole, the second loses 50 ms at its start.
    expect(tail.map((c) => c[0])).toEqual([1, 2, 3, 4, 5]);
    expect(tail[0]!.length).toBe(20 * 16);
  });
});
