import { describe, expect, it } from 'vitest';
import { assertMistralBaseUrl, InvalidMistralBaseUrlError, mistralHostOf } from '../../adapters/mistral/base-url.ts';
import { ConfigError, loadConfig } from '../../runtime/config.ts';
import { createModels } from '../../adapters/models/model-provider.ts';

describe('configuration', () => {
  it('has the documented defaults', () => {
    const c = loadConfig({});
    expect(c).toMatchObject({ PORT: 8080, HOST: '127.0.0.1', KOHAMI_ENV: 'development', PGLITE_DATA_DIR: '.data/pglite', TURN_BUDGET_MS: 2500, SESSION_PAUSE_MS: 3_600_000 });
    expect(c.DATABASE_URL).toBeUndefined();
    expect(c.MISTRAL_API_KEY).toBeUndefined();
  });

  it.each([
    [{ PORT: 'eighty' }, 'PORT'],
    [{ TURN_BUDGET_MS: '0' }, 'TURN_BUDGET_MS'],
    [{ KOHAMI_ENV: 'staging' }, 'KOHAMI_ENV'],
    [{ DATABASE_URL: 'mysql://db/x' }, 'DATABASE_URL'],
    [{ DEV_KIOSK_TOKEN: 'short' }, 'DEV_KIOSK_TOKEN'],
    [{ RECALL_MIN_SIMILARITY: 'strict' }, 'RECALL_MIN_SIMILARITY'],
    [{ RECALL_MIN_SIMILARITY: '1.5' }, 'RECALL_MIN_SIMILARITY'],
  ])('refuses %o with one line naming %s', (env, name) => {
    expect(() => loadConfig(env)).toThrow(ConfigError);
    try {
      loadConfig(env);
    } catch (err) {
      const message = (err as Error).message;
      expect(message.split('\n')).toHaveLength(1);
      expect(message).toContain(name);
    }
  });

  it('RECALL_MIN_SIMILARITY: the calibrated floor unless set (or set empty), off, or a similarity that overrides it', () => {
    expect(loadConfig({}).RECALL_MIN_SIMILARITY).toBe('calibrated');
    expect(loadConfig({ RECALL_MIN_SIMILARITY: '' }).RECALL_MIN_SIMILARITY).toBe('calibrated');
    expect(loadConfig({ RECALL_MIN_SIMILARITY: 'off' }).RECALL_MIN_SIMILARITY).toBe('off');
    expect(loadConfig({ RECALL_MIN_SIMILARITY: ' 0.35 ' }).RECALL_MIN_SIMILARITY).toBe(0.35);
  });

  it('unset KOHAMI_ENV is development on a loopback HOST only: a deployment listening on the network that forgets it is production', () => {
    for (const HOST of ['127.0.0.1', '127.0.1.1', 'localhost', '::1']) expect(loadConfig({ HOST }).KOHAMI_ENV, HOST).toBe('development');
    for (const HOST of ['0.0.0.0', '::', '10.0.0.5', 'kohami.example']) expect(loadConfig({ HOST }).KOHAMI_ENV, HOST).toBe('production');
    expect(loadConfig({ HOST: '0.0.0.0', KOHAMI_ENV: 'development' }).KOHAMI_ENV).toBe('development');
    // Production refuses a loopback Mistral URL: the rule follows the derived value.
    expect(() => loadConfig({ HOST: '0.0.0.0', MISTRAL_BASE_URL: 'http://127.0.0.1:9/v1' })).toThrow(/MISTRAL_BASE_URL/);
  });

  it('never echoes a secret value in the error', () => {
    expect(() => loadConfig({ DEV_ADMIN_TOKEN: 'tiny' })).toThrow(/DEV_ADMIN_TOKEN: /);
    expect(() => loadConfig({ DEV_ADMIN_TOKEN: 'tiny' })).not.toThrow(/tiny/);
    // A collector URL may hold credentials.
    expect(() => loadConfig({ OTEL_EXPORTER_OTLP_ENDPOINT: 'ftp://user:s3cret@collector' })).toThrow(/OTEL_EXPORTER_OTLP_ENDPOINT: /);
    expect(() => loadConfig({ OTEL_EXPORTER_OTLP_ENDPOINT: 'ftp://user:s3cret@collector' })).not.toThrow(/s3cret/);
  });

  it('caregiver alerts: on by default without a webhook; a webhook URL needs a secret of 32 characters, never echoed', () => {
    expect(loadConfig({})).toMatchObject({ CAREGIVER_ALERT_STREAK_DAYS: 3, CAREGIVER_ALERT_WEEKLY_DROP: 15, CAREGIVER_ALERT_RETRY_DELAY_S: 30 });
    expect(loadConfig({}).CAREGIVER_ALERT_WEBHOOK_URL).toBeUndefined();
    const url = 'https://alerts.example.org/hook?key=k3y';
    expect(() => loadConfig({ CAREGIVER_ALERT_WEBHOOK_URL: url })).toThrow(/^invalid configuration: CAREGIVER_ALERT_WEBHOOK_SECRET: required when CAREGIVER_ALERT_WEBHOOK_URL is set/);
    const short = 'only-31-characters-long-secret!';
    expect(() => loadConfig({ CAREGIVER_ALERT_WEBHOOK_URL: url, CAREGIVER_ALERT_WEBHOOK_SECRET: short })).toThrow(ConfigError);
    expect(() => loadConfig({ CAREGIVER_ALERT_WEBHOOK_URL: url, CAREGIVER_ALERT_WEBHOOK_SECRET: short })).toThrow(/CAREGIVER_ALERT_WEBHOOK_SECRET: must be at least 32 characters/);
    expect(() => loadConfig({ CAREGIVER_ALERT_WEBHOOK_URL: url, CAREGIVER_ALERT_WEBHOOK_SECRET: short })).not.toThrow(/only-31/);
    expect(() => loadConfig({ CAREGIVER_ALERT_WEBHOOK_URL: 'ftp://alerts.example.org/k3y' })).not.toThrow(/k3y/);
    expect(loadConfig({ CAREGIVER_ALERT_WEBHOOK_URL: url, CAREGIVER_ALERT_WEBHOOK_SECRET: `${short}x` }).CAREGIVER_ALERT_WEBHOOK_SECRET).toBe(`${short}x`);
    expect(loadConfig({ CAREGIVER_ALERT_STREAK_DAYS: '0', CAREGIVER_ALERT_WEEKLY_DROP: '0' })).toMatchObject({ CAREGIVER_ALERT_STREAK_DAYS: 0, CAREGIVER_ALERT_WEEKLY_DROP: 0 });
    expect(() => loadConfig({ CAREGIVER_ALERT_STREAK_DAYS: '-1' })).toThrow(/CAREGIVER_ALERT_STREAK_DAYS/);
  });

  it('traces: off unless a collector URL is set; the service name defaults to kohami-runtime', () => {
    expect(loadConfig({}).OTEL_EXPORTER_OTLP_ENDPOINT).toBeUndefined();
    expect(loadConfig({ OTEL_EXPORTER_OTLP_ENDPOINT: ' ' }).OTEL_EXPORTER_OTLP_ENDPOINT).toBeUndefined();
    expect(loadConfig({ OTEL_EXPORTER_OTLP_ENDPOINT: 'http://collector:4318' }).OTEL_EXPORTER_OTLP_ENDPOINT).toBe('http://collector:4318');
    expect(loadConfig({}).OTEL_SERVICE_NAME).toBe('kohami-runtime');
    expect(() => loadConfig({ OTEL_SERVICE_NAME: ' ' })).toThrow(/OTEL_SERVICE_NAME/);
  });
});

describe('INV-T02: Mistral base URL whitelist, checked at construction', () => {
  it('admits the SDK’s EU and Global servers and the seed’s name over https, each with its region; the default is the EU server', () => {
    expect(mistralHostOf('https://api.eu.mistral.ai/v1', 'production')).toMatchObject({ host: 'api.eu.mistral.ai', region: 'EU' });
    expect(mistralHostOf('https://api.mistral.ai/v1', 'production')).toMatchObject({ host: 'api.mistral.ai', region: 'Global' });
    expect(mistralHostOf('https://eu.api.mistral.ai/v1', 'production')).toMatchObject({ host: 'eu.api.mistral.ai', region: 'unconfirmed' });
    expect(mistralHostOf('http://127.0.0.1:9999/v1', 'test')).toMatchObject({ host: '127.0.0.1:9999', region: 'local' });
    const defaults = loadConfig({ KOHAMI_ENV: 'production', DATABASE_URL: 'postgres://db.example:5432/kohami' });
    expect(defaults.MISTRAL_BASE_URL).toBe('https://api.eu.mistral.ai/v1');
    expect(mistralHostOf(defaults.MISTRAL_BASE_URL, 'production').region).toBe('EU');
  });

  it('refuses the SDK’s US server (not the EU, not wanted), naming the hosts it admits and their regions', () => {
    expect(() => assertMistralBaseUrl('https://api.us.mistral.ai/v1', 'production')).toThrow(
      'MISTRAL_BASE_URL https://api.us.mistral.ai/v1 is not an allowed Mistral endpoint: https on api.eu.mistral.ai (EU), api.mistral.ai (Global), eu.api.mistral.ai (unconfirmed)',
    );
  });

  it('refuses any other host, plain http, and a look-alike', () => {
    for (const url of ['https://api.openai.com/v1', 'http://api.mistral.ai/v1', 'http://api.eu.mistral.ai/v1', 'https://api.mistral.ai.evil.example/v1', 'https://constructor/v1', 'not a url']) {
      expect(() => assertMistralBaseUrl(url, 'development')).toThrow(InvalidMistralBaseUrlError);
    }
  });

  it('admits loopback only outside production (for a local fake Mistral)', () => {
    expect(() => assertMistralBaseUrl('http://127.0.0.1:9999/v1', 'test')).not.toThrow();
    expect(() => assertMistralBaseUrl('http://127.0.0.1:9999/v1', 'production')).toThrow(InvalidMistralBaseUrlError);
    expect(() => loadConfig({ KOHAMI_ENV: 'production', MISTRAL_BASE_URL: 'http://localhost:1/v1' })).toThrow(/MISTRAL_BASE_URL/);
  });

  it('is enforced when the models are built, not only when config is read', () => {
    expect(() => createModels({ apiKey: 'k', baseUrl: 'https://evil.example/v1', agentModelId: 'm', subagentModelId: 'm', env: 'development' })).toThrow(InvalidMistralBaseUrlError);
    expect(createModels({ baseUrl: 'https://evil.example/v1', agentModelId: 'm', subagentModelId: 'm', env: 'development' }).mode).toBe('offline');
  });
});
