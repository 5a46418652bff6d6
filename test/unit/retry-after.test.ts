import { APICallError } from '@ai-sdk/provider';
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { DEFAULT_THROTTLE_PAUSE_MS, MAX_THROTTLE_PAUSE_MS, ProviderPause, retryAfterMs, throttleMs, throttleOfError } from '../../adapters/mistral/retry-after.ts';

const NOW = Date.parse('2026-10-01T10:00:00Z');

describe('retryAfterMs: the wait a response asks for', () => {
  it('reads delay-seconds, an HTTP date, and retry-after-ms', () => {
    expect(retryAfterMs({ 'retry-after': '3' }, NOW)).toBe(3000);
    expect(retryAfterMs({ 'retry-after': ' 1 ' }, NOW)).toBe(1000);
    expect(retryAfterMs({ 'retry-after': '1.5' }, NOW)).toBe(1500);
    expect(retryAfterMs({ 'retry-after': new Date(NOW + 5000).toUTCString() }, NOW)).toBe(5000);
    expect(retryAfterMs({ 'retry-after-ms': '250', 'retry-after': '3' }, NOW)).toBe(250);
    // node:http gives a repeated header as an array: the first one counts.
    expect(retryAfterMs({ 'retry-after': ['2', '9'] }, NOW)).toBe(2000);
  });

  it('a date already past is no wait; nothing readable is null', () => {
    expect(retryAfterMs({ 'retry-after': new Date(NOW - 5000).toUTCString() }, NOW)).toBe(0);
    expect(retryAfterMs({}, NOW)).toBeNull();
    expect(retryAfterMs(undefined, NOW)).toBeNull();
    expect(retryAfterMs({ 'retry-after': '' }, NOW)).toBeNull();
    expect(retryAfterMs({ 'retry-after': 'soon' }, NOW)).toBeNull();
    expect(retryAfterMs({ 'retry-after': '-3' }, NOW)).toBeNull();
  });

  it(`is capped at ${MAX_THROTTLE_PAUSE_MS} ms, in seconds as in a date`, () => {
    expect(retryAfterMs({ 'retry-after': '3600' }, NOW)).toBe(MAX_THROTTLE_PAUSE_MS);
    expect(retryAfterMs({ 'retry-after': new Date(NOW + 3_600_000).toUTCString() }, NOW)).toBe(MAX_THROTTLE_PAUSE_MS);
    expect(retryAfterMs({ 'retry-after-ms': '999999' }, NOW)).toBe(MAX_THROTTLE_PAUSE_MS);
  });
});

describe('throttleMs: what an answer asks of the later calls', () => {
  it(`a 429 waits its Retry-After, ${DEFAULT_THROTTLE_PAUSE_MS} ms without one; a 503 only with one; nothing else asks`, () => {
    expect(throttleMs(429, { 'retry-after': '2' }, NOW)).toBe(2000);
    expect(throttleMs(429, {}, NOW)).toBe(DEFAULT_THROTTLE_PAUSE_MS);
    expect(throttleMs(503, { 'retry-after': '4' }, NOW)).toBe(4000);
    expect(throttleMs(503, {}, NOW)).toBeNull();
    expect(throttleMs(500, { 'retry-after': '4' }, NOW)).toBeNull();
    expect(throttleMs(undefined, undefined, NOW)).toBeNull();
  });

  it('reads an AI SDK call error (APICallError keeps the status and headers), and nothing else', () => {
    const err = new APICallError({ message: '429', url: 'u', requestBodyValues: {}, statusCode: 429, responseHeaders: { 'retry-after': '3' } });
    expect(throttleOfError(err, NOW)).toBe(3000);
    expect(throttleOfError(new Error('429'), NOW)).toBeNull();
  });
});

describe('ProviderPause', () => {
  beforeEach(() => {
    vi.useFakeTimers({ toFake: ['setTimeout', 'clearTimeout', 'Date'] });
  });
  afterEach(() => vi.useRealTimers());

  it('lasts what was asked; a shorter ask never shortens it; nothing asked is no pause', () => {
    const pause = new ProviderPause();
    expect(pause.leftMs).toBe(0);
    expect(pause.note(null)).toBeNull();
    expect(pause.leftMs).toBe(0);
    expect(pause.note(3000)).toBe(3000);
    pause.note(1000);
    expect(pause.leftMs).toBe(3000);
    vi.advanceTimersByTime(2000);
    expect(pause.leftMs).toBe(1000);
  });

  it('`over` resolves when the pause ends, waiting again if it was lengthened meanwhile; an abort rejects it', async () => {
    const pause = new ProviderPause();
    pause.note(1000);
    let done = false;
    const over = pause.over().then(() => (done = true));
    await vi.advanceTimersByTimeAsync(500);
    pause.note(2000);
    await vi.advanceTimersByTimeAsync(1999);
    expect(done).toBe(false);
    await vi.advanceTimersByTimeAsync(1);
    await over;
    expect(done).toBe(true);

    pause.note(5000);
    const aborting = new AbortController();
    const waiting = pause.over(aborting.signal);
    aborting.abort(new Error('barge-in'));
    await expect(waiting).rejects.toThrow('barge-in');
    await expect(new ProviderPause().over()).resolves.toBeUndefined();
  });
});
