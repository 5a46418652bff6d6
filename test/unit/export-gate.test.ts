import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { ExportGate } from '../../runtime/http/admin/export-gate.ts';

/** The bound on exports: how many run, how many wait and for how long, and a client that leaves while waiting. */
describe('ExportGate', () => {
  beforeEach(() => vi.useFakeTimers());
  afterEach(() => vi.useRealTimers());
  const settings = { concurrency: 2, queue: 1, waitMs: 30_000 };
  const open = () => new AbortController().signal;

  it('admits `concurrency` at once, queues `queue` more and refuses the next at once; a release admits the first waiting', async () => {
    const gate = new ExportGate(settings);
    const a = await gate.enter(open());
    const b = await gate.enter(open());
    expect([typeof a, typeof b]).toEqual(['function', 'function']);
    const onWait = vi.fn();
    const c = gate.enter(open(), onWait);
    expect(onWait).toHaveBeenCalledOnce();
    expect(await gate.enter(open())).toBe('full');
    expect(gate.counts).toEqual({ running: 2, waiting: 1 });
    (a as () => void)();
    (a as () => void)(); // a second release of the same export frees nothing more
    expect(typeof (await c)).toBe('function');
    expect(gate.counts).toEqual({ running: 2, waiting: 0 });
  });

  it('a wait is bounded by waitMs, and ends when its client leaves', async () => {
    const gate = new ExportGate(settings);
    await gate.enter(open());
    await gate.enter(open());
    const timedOut = gate.enter(open());
    await vi.advanceTimersByTimeAsync(settings.waitMs - 1);
    expect(gate.counts.waiting).toBe(1);
    await vi.advanceTimersByTimeAsync(1);
    expect(await timedOut).toBe('timeout');
    const client = new AbortController();
    const left = gate.enter(client.signal);
    client.abort();
    expect(await left).toBe('gone');
    expect(gate.counts).toEqual({ running: 2, waiting: 0 });
  });
});
