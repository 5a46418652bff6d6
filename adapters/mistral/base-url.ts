/** The deployment kinds; only `production` refuses a loopback Mistral URL. */
export const KOHAMI_ENVS = ['development', 'test', 'production'] as const;
export type KohamiEnv = (typeof KOHAMI_ENVS)[number];

/** Hosts a Mistral base URL may point at (INV-T02: data stays with the EU endpoints). */
export const MISTRAL_HOST_WHITELIST = ['api.mistral.ai', 'eu.api.mistral.ai'] as const;
const LOOPBACK_HOSTS = new Set(['localhost', '127.0.0.1', '[::1]', '::1']);

export class InvalidMistralBaseUrlError extends Error {
  constructor(url: string) {
    super(`MISTRAL_BASE_URL ${url} is not an allowed Mistral endpoint (${MISTRAL_HOST_WHITELIST.join(', ')})`);
    this.name = 'InvalidMistralBaseUrlError';
  }
}

/**
 * INV-T02. Loopback is admitted outside production so tests can put a fake
 * Mistral server behind the real adapter.
 */
export function assertMistralBaseUrl(url: string, env: KohamiEnv): void {
  let parsed: URL;
  try {
    parsed = new URL(url);
  } catch {
    throw new InvalidMistralBaseUrlError(url);
  }
  const host = parsed.hostname;
  const whitelisted = parsed.protocol === 'https:' && (MISTRAL_HOST_WHITELIST as readonly string[]).includes(host);
  const loopback = env !== 'production' && LOOPBACK_HOSTS.has(host);
  if (!whitelisted && !loopback) throw new InvalidMistralBaseUrlError(url);
}

/**
 * INV-T02 first, then the SDK's server URL: MISTRAL_BASE_URL ends in `/v1`, the SDK appends
 * `/v1/…` itself. A base URL without the `/v1` suffix is refused rather than guessed at, so
 * chat and audio always reach the same host and path.
 */
export function mistralSdkServerUrl(baseUrl: string, env: KohamiEnv): string {
  assertMistralBaseUrl(baseUrl, env);
  const url = new URL(baseUrl);
  const path = url.pathname.replace(/\/+$/, '');
  if (!path.endsWith('/v1')) throw new Error(`MISTRAL_BASE_URL ${baseUrl} must end in /v1`);
  url.pathname = path.slice(0, -'/v1'.length) || '/';
  return url.toString().replace(/\/+$/, '');
}
