import { describe, expect, it } from 'vitest';
import { parseClientFrame } from '../../runtime/kiosk/protocol.ts';

describe('kiosk protocol parsing', () => {
  it('accepts every client frame of the protocol', () => {
    for (const frame of [
      { type: 'session.start' },
      { type: 'session.start', resume: true },
      { type: 'turn', turnId: 't1', transcript: 'bonjour' },
      { type: 'interrupt', turnId: 't1' },
      { type: 'session.end' },
      { type: 'ping' },
    ]) {
      expect(parseClientFrame(JSON.stringify(frame))).toEqual({ ok: true, frame });
    }
  });

  it.each([
    ['{not json', 'invalid_json'],
    ['[1,2]', 'invalid_frame'],
    ['"turn"', 'invalid_frame'],
    ['{"type":"dance"}', 'unknown_type'],
    ['{"transcript":"x"}', 'unknown_type'],
    ['{"type":"turn","turnId":"t1"}', 'invalid_frame'],
    ['{"type":"turn","turnId":7,"transcript":"x"}', 'invalid_frame'],
    ['{"type":"turn","turnId":"t1","transcript":"   "}', 'invalid_frame'],
    ['{"type":"session.start","resume":"yes"}', 'invalid_frame'],
  ])('%s → %s with a message', (raw, code) => {
    const result = parseClientFrame(raw);
    expect(result.ok).toBe(false);
    if (!result.ok) {
      expect(result.code).toBe(code);
      expect(result.message.length).toBeGreaterThan(10);
    }
  });

  it('names the missing field', () => {
    const result = parseClientFrame('{"type":"turn","turnId":"t1"}');
    expect(!result.ok && result.message).toContain('transcript');
  });
});
