import { describe, expect, it } from 'vitest';
import { Replay } from '../../runtime/voice/preemption/replay.ts';

/** A source whose items the test releases one at a time. */
function controlled<T>() {
  const queue: Array<IteratorResult<T>> = [];
  let wake: (() => void) | null = null;
  let failure: unknown = null;
  const push = (r: IteratorResult<T>) => {
    queue.push(r);
    wake?.();
  };
  async function* source(): AsyncGenerator<T> {
    for (;;) {
      while (queue.length === 0 && failure === null) await new Promise<void>((resolve) => (wake = resolve));
      if (queue.length === 0) throw failure;
      const next = queue.shift()!;
      if (next.done) return;
      yield next.value;
    }
  }
  return { source: source(), item: (value: T) => push({ value, done: false }), end: () => push({ value: undefined, done: true }), fail: (err: unknown) => ((failure = err), wake?.()) };
}

async function readAll<T>(iterable: AsyncIterable<T>): Promise<T[]> {
  const out: T[] = [];
  for await (const x of iterable) out.push(x);
  return out;
}

describe('a recorded stream (the speculative turn hands it to the turn that adopts it)', () => {
  it('a later reader gets every item from the first, then the rest as it comes', async () => {
    const src = controlled<string>();
    const replay = new Replay(src.source, 10);
    const first = new AbortController();
    const early = replay.read(first.signal);
    src.item('Bon');
    expect((await early.next()).value).toBe('Bon');
    // The first reader stops (the shadow turn is gone): the source goes on.
    first.abort();
    expect((await early.next()).done).toBe(true);
    src.item('jour');
    const late = readAll(replay.read(new AbortController().signal));
    src.item('.');
    src.end();
    expect(await late).toEqual(['Bon', 'jour', '.']);
  });

  it('a reader gets the source’s failure after the items before it', async () => {
    const src = controlled<number>();
    const replay = new Replay(src.source, 10);
    src.item(1);
    src.fail(new Error('model failed'));
    const got: number[] = [];
    await expect(async () => {
      for await (const x of replay.read(new AbortController().signal)) got.push(x);
    }).rejects.toThrow('model failed');
    expect(got).toEqual([1]);
  });

  it('is bounded: past its maximum the replay fails rather than grow', async () => {
    const src = controlled<number>();
    const replay = new Replay(src.source, 2);
    src.item(1);
    src.item(2);
    src.item(3);
    await expect(readAll(replay.read(new AbortController().signal))).rejects.toThrow(RangeError);
  });

  it('a reader waiting for the next item returns when its signal aborts', async () => {
    const src = controlled<number>();
    const replay = new Replay(src.source, 10);
    const controller = new AbortController();
    const reading = readAll(replay.read(controller.signal));
    controller.abort();
    expect(await reading).toEqual([]);
  });
});
