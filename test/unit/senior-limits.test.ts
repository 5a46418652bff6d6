import { describe, expect, it } from 'vitest';
import { SeniorLimits } from '../../runtime/kiosk/senior-limits.ts';

const settings = { socketsPerSenior: 2, startsBurst: 3, startsPerMinute: 60 };

describe('per-senior kiosk limits', () => {
  it('caps a senior’s sockets, and the entry goes with the last socket once its start bucket is full', () => {
    const limits = new SeniorLimits(settings, () => 0);
    expect(limits.openSocket('a')).toEqual({ ok: true });
    expect(limits.openSocket('a')).toEqual({ ok: true });
    expect(limits.openSocket('a')).toEqual({ ok: false, reason: 'too_many_sockets' });
    expect(limits.openSocket('b')).toEqual({ ok: true });
    limits.closeSocket('a');
    limits.closeSocket('a');
    limits.closeSocket('b');
    expect(limits.size).toBe(0);
  });

  it('refuses starts past the bucket with the wait; closing and reopening sockets does not reset it; swept once refilled', () => {
    let t = 0;
    const limits = new SeniorLimits(settings, () => t);
    limits.openSocket('a');
    for (let i = 0; i < settings.startsBurst; i++) expect(limits.takeStart('a')).toEqual({ ok: true });
    expect(limits.takeStart('a')).toEqual({ ok: false, retryAfterMs: 1000 });
    limits.closeSocket('a');
    expect(limits.size).toBe(1);
    limits.openSocket('a');
    expect(limits.takeStart('a').ok).toBe(false);
    limits.closeSocket('a');
    t += (settings.startsBurst * 60_000) / settings.startsPerMinute;
    limits.sweep();
    expect(limits.size).toBe(0);
  });

  it('tracks at most maxTracked seniors, sweeping idle ones before refusing', () => {
    let t = 0;
    const limits = new SeniorLimits(settings, () => t, 2);
    limits.openSocket('a');
    limits.openSocket('b');
    expect(limits.openSocket('c')).toEqual({ ok: false, reason: 'too_many_seniors' });
    limits.takeStart('b');
    limits.closeSocket('b');
    t += 60_000;
    expect(limits.openSocket('c')).toEqual({ ok: true });
    expect(limits.size).toBe(2);
  });
});
