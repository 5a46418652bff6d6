import { afterEach, describe, expect, it, vi } from 'vitest';
import { spawnRuntime } from '../support/runtime-process.ts';

/**
 * The tests' runtime launcher (test/support/runtime-process.ts) keeps its start bound with a timer of
 * its own — a process that hangs without a word fails at the bound instead of at the test's timeout —
 * and holds one listener per event while it waits, however much the process writes first.
 */

const env = { PATH: process.env.PATH ?? '' };
/** Node running `code`; each exits by itself within two minutes should a run leave it behind. */
const script = (code: string) => ['-e', `${code}; setTimeout(() => {}, 120000)`];

afterEach(() => {
  vi.useRealTimers();
});

describe('spawnRuntime', () => {
  it('a process silent past its start bound fails at the bound', async () => {
    vi.useFakeTimers({ toFake: ['setTimeout', 'clearTimeout', 'Date'] });
    const startMs = 60_000;
    const starting = spawnRuntime(script(''), { env, startMs });
    const outcome = starting.then(() => 'started', (error: Error) => error.message);
    await vi.advanceTimersByTimeAsync(startMs);
    vi.useRealTimers();
    await expect.poll(() => Promise.race([outcome, 'pending']), { timeout: 10_000 }).toMatch(/^runtime process did not start within 60000 ms/);
  }, 30_000);

  it('many writes before the banner: no close listener left behind, no MaxListeners warning', async () => {
    const lines = 25;
    const code = `let i = 0; const t = setInterval(() => { console.log('line ' + i); if (++i === ${lines}) { clearInterval(t); console.log('listening on http://127.0.0.1:9 kiosk WebSocket'); } }, 5)`;
    const warnings: string[] = [];
    const onWarning = (w: Error) => warnings.push(w.name);
    process.on('warning', onWarning);
    const runtime = await spawnRuntime(script(code), { env, startMs: 60_000 });
    process.off('warning', onWarning);
    expect(runtime.output()).toContain(`line ${lines - 1}`);
    expect(runtime.child.listenerCount('close')).toBe(0);
    expect(warnings).not.toContain('MaxListenersExceededWarning');
    await runtime.stop();
    expect(runtime.child.signalCode).toBe('SIGTERM');
  }, 60_000);
});
