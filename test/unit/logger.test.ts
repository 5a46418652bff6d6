import { describe, expect, it } from 'vitest';
import { createLogger, redactUrl } from '../../runtime/logger.ts';
import { LogCapture } from '../support/runtime.ts';

const CANARY = 'canari-violet-7731';

describe('log redaction (never verbatim)', () => {
  it('censors conversation text under every sensitive key, at any depth', () => {
    const logs = new LogCapture();
    const log = createLogger('trace', logs);
    log.info({ transcript: CANARY, reply: CANARY, text: CANARY, delta: CANARY }, 'turn');
    log.warn({ turn: { transcript: CANARY, replyText: CANARY } }, 'nested');
    log.error({ event: { turns: { content: CANARY } } }, 'deeper');
    log.debug({ messages: [{ role: 'user', content: CANARY }] }, 'prompt');
    expect(logs.lines).toHaveLength(4);
    expect(logs.text).not.toContain(CANARY);
    expect(logs.text).toContain('[redacted]');
  });

  it('keeps only the type and code of errors, whose messages may quote a prompt', () => {
    const logs = new LogCapture();
    createLogger('info', logs).error({ err: Object.assign(new Error(`bad request: ${CANARY}`), { code: 'E_MODEL' }) }, 'model failed');
    expect(logs.text).not.toContain(CANARY);
    expect(logs.text).toContain('E_MODEL');
  });

  it('drops query strings from logged URLs (kiosk tokens may travel there)', () => {
    expect(redactUrl('/v1/kiosk?token=kiosk_secret')).toBe('/v1/kiosk?[redacted]');
    expect(redactUrl('/health')).toBe('/health');
  });
});
