import { pino, type DestinationStream, type Logger } from 'pino';

/**
 * Keys that may carry conversation text or secrets. Never-verbatim rule: whatever
 * a caller passes under these names is censored before it is serialized.
 */
const SENSITIVE_KEYS = ['transcript', 'text', 'reply', 'replyText', 'delta', 'content', 'messages', 'prompt', 'token', 'authorization'];

export const REDACT_PATHS = [
  ...SENSITIVE_KEYS,
  ...SENSITIVE_KEYS.map((k) => `*.${k}`),
  ...SENSITIVE_KEYS.map((k) => `*.*.${k}`),
  'req.headers.authorization',
  'req.headers.cookie',
];

/** Drops the query string: kiosks may authenticate with `?token=`. */
export function redactUrl(url: string): string {
  const q = url.indexOf('?');
  return q === -1 ? url : `${url.slice(0, q)}?[redacted]`;
}

export function createLogger(level: string, destination?: DestinationStream): Logger {
  return pino(
    {
      level,
      redact: { paths: REDACT_PATHS, censor: '[redacted]' },
      serializers: {
        req: (req: { method?: string; url?: string; id?: string }) => ({
          id: req.id,
          method: req.method,
          url: req.url ? redactUrl(req.url) : undefined,
        }),
        // Error messages from model providers may quote the prompt; keep type and code only.
        err: (err: Error & { code?: string; statusCode?: number }) => ({
          type: err.name,
          code: err.code,
          statusCode: err.statusCode,
        }),
      },
    },
    destination,
  );
}
