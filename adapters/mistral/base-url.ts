/** The deployment kinds; only `production` refuses a loopback Mistral URL. */
export const KOHAMI_ENVS = ['development', 'test', 'production'] as const;
export type KohamiEnv = (typeof KOHAMI_ENVS)[number];

/**
 * Where a Mistral host runs inference: `EU` (EU/EFTA data centres), `Global` (wherever Mistral routes
 * it), `unconfirmed` (a name no source states a region for), `local` (a loopback stand-in: tests, benchmarks).
 */
export type MistralRegion = 'EU' | 'Global' | 'unconfirmed' | 'local';

/**
 * The hosts a Mistral base URL may point at (INV-T02), each with its region. The first two are the
 * SDK's own servers (@mistralai/mistralai `lib/config.ts`: `eu` and `global`), as Mistral's
 * regional-inference page names them; EU inference is billed 1.1× list price there. The third is the
 * seed's name for the EU endpoint, in neither the SDK nor Mistral's docs: it is kept so that a
 * deployment configured from the seed still starts, but nothing here could reach the network to see
 * whether it is served, nor where, so it claims no region.
 */
export const MISTRAL_HOSTS: Readonly<Record<string, { region: Exclude<MistralRegion, 'local'>; note: string }>> = {
  'api.eu.mistral.ai': { region: 'EU', note: "the SDK's EU server: inference stays in EU/EFTA data centres" },
  'api.mistral.ai': { region: 'Global', note: "the SDK's Global server: inference may run outside the EU" },
  'eu.api.mistral.ai': { region: 'unconfirmed', note: "the seed's name, in neither the SDK nor Mistral's docs: use api.eu.mistral.ai" },
};
const LOOPBACK_HOSTS = new Set(['localhost', '127.0.0.1', '[::1]', '::1']);

export class InvalidMistralBaseUrlError extends Error {
  constructor(url: string) {
    const allowed = Object.entries(MISTRAL_HOSTS).map(([host, { region }]) => `${host} (${region})`);
    super(`MISTRAL_BASE_URL ${url} is not an allowed Mistral endpoint: https on ${allowed.join(', ')}`);
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
  const whitelisted = parsed.protocol === 'https:' && Object.hasOwn(MISTRAL_HOSTS, host);
  const loopback = env !== 'production' && LOOPBACK_HOSTS.has(host);
  if (!whitelisted && !loopback) throw new InvalidMistralBaseUrlError(url);
}

/** The host an admitted base URL points at, its region, and what to know of it. */
export interface MistralHost {
  host: string;
  region: MistralRegion;
  note: string;
}

/** The Mistral host of a base URL (INV-T02 checked first): said at start and by `/ready`. */
export function mistralHostOf(baseUrl: string, env: KohamiEnv): MistralHost {
  assertMistralBaseUrl(baseUrl, env);
  const { hostname, host } = new URL(baseUrl);
  return Object.hasOwn(MISTRAL_HOSTS, hostname) ? { host, ...MISTRAL_HOSTS[hostname]! } : { host, region: 'local', note: 'a loopback stand-in for Mistral' };
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
