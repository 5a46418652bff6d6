import http from 'node:http';
import https from 'node:https';
import { assertMistralBaseUrl, type KohamiEnv } from './base-url.ts';

export interface MistralSettings {
  apiKey: string;
  /** MISTRAL_BASE_URL: checked at construction (INV-T02); every request of the endpoint goes under it. */
  baseUrl: string;
  env: KohamiEnv;
}

/**
 * One Mistral endpoint (`${baseUrl}/${path}`) for the runtime's lean clients: its address resolved
 * once (a URL would be parsed again into these options on every request), a keep-alive connection
 * pool of its own, and the key on every request.
 */
export class MistralEndpoint {
  readonly url: string;
  private readonly transport: typeof http | typeof https;
  private readonly target: http.RequestOptions;
  private readonly headers: Record<string, string>;

  constructor(settings: MistralSettings, path: string, accept: string) {
    assertMistralBaseUrl(settings.baseUrl, settings.env);
    const url = new URL(`${settings.baseUrl.replace(/\/+$/, '')}/${path}`);
    this.url = url.href;
    this.transport = url.protocol === 'https:' ? https : http;
    const agent = new this.transport.Agent({ keepAlive: true });
    this.target = { protocol: url.protocol, hostname: url.hostname.replace(/^\[|\]$/g, ''), port: url.port || undefined, path: url.pathname + url.search, method: 'POST', agent };
    this.headers = { authorization: `Bearer ${settings.apiKey}`, 'content-type': 'application/json', accept };
  }

  /**
   * A POST of `body` (a JSON text), resolved with the response whatever its status; the caller reads
   * (or drains) it. An abort of `signal` before the response destroys the request and rejects with the
   * signal's reason; after it, the caller's reading of the body answers for the signal. A kept-alive
   * connection the server closed just as it was reused is asked again once, at once, on a new one.
   */
  send(body: string, signal?: AbortSignal, headers?: Record<string, string>): Promise<http.IncomingMessage> {
    if (signal?.aborted) return Promise.reject(signal.reason);
    return new Promise((resolve, reject) => {
      const attempt = (mayRetry: boolean) => {
        const req = this.transport.request({ ...this.target, headers: { ...this.headers, ...headers, 'content-length': String(Buffer.byteLength(body)) } });
        const onAbort = () => {
          req.destroy();
          reject(signal!.reason);
        };
        signal?.addEventListener('abort', onAbort, { once: true });
        req.on('error', (err: NodeJS.ErrnoException) => {
          signal?.removeEventListener('abort', onAbort);
          if (mayRetry && req.reusedSocket && err.code === 'ECONNRESET' && !signal?.aborted) return attempt(false);
          reject(err);
        });
        req.on('response', (res) => {
          signal?.removeEventListener('abort', onAbort);
          resolve(res);
        });
        req.end(body);
      };
      attempt(true);
    });
  }
}
