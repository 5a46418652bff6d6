import { describe, expect, it } from 'vitest';
import { droppedTurnId, parseClientFrame } from '../../runtime/protocol/messages.ts';

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

  it('a refused turn or interrupt names its turnId when it has a usable one', () => {
    expect(parseClientFrame('{"type":"turn","turnId":"t9","transcript":"  "}')).toMatchObject({ ok: false, code: 'invalid_frame', turnId: 't9' });
    expect(parseClientFrame('{"type":"turn","turnId":"t9","transcript":7}')).toMatchObject({ ok: false, turnId: 't9' });
    for (const raw of ['{"type":"turn","turnId":7,"transcript":"x"}', `{"type":"turn","turnId":"${'x'.repeat(129)}","transcript":"x"}`, '{"type":"turn","turnId":"","transcript":"x"}', '{"type":"session.start","turnId":"t9","resume":1}']) {
      const result = parseClientFrame(raw);
      expect(result.ok).toBe(false);
      expect(result).not.toHaveProperty('turnId');
    }
  });
});

describe('the turnId of a frame dropped unread', () => {
  it.each([
    ['{"type":"turn","turnId":"t1","transcript":"bonjour"}', 't1'],
    ['{"type":"turn","turnId":"t1","transcript":""}', 't1'],
    ['{"type":"turn","turnId":"t1"}', 't1'],
    ['{"type":"interrupt","turnId":"t1"}', undefined],
    ['{"type":"ping","turnId":"t1"}', undefined],
    ['{"type":"turn","turnId":12}', undefined],
    ['{"type":"turn"', undefined],
    ['null', undefined],
    ['"turn"', undefined],
  ])('%s → %s', (raw, turnId) => {
    expect(droppedTurnId(raw)).toBe(turnId);
  });
});
