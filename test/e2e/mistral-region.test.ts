import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { mistralHostOf } from '../../adapters/mistral/base-url.ts';
import { loadConfig } from '../../runtime/config.ts';
import { bannerLines } from '../../runtime/main.ts';
import { FakeMistral } from '../support/fake-mistral.ts';
import { startTestRuntime, type TestRuntime } from '../support/runtime.ts';

/** INV-T02 made visible: the start banner and `/ready` name the region of the Mistral host in use. */
let mistral: FakeMistral;
let rt: TestRuntime;

beforeAll(async () => {
  mistral = await new FakeMistral().start();
  rt = await startTestRuntime({}, { MISTRAL_API_KEY: 'test-key', MISTRAL_BASE_URL: mistral.baseUrl });
}, 60_000);
afterAll(async () => {
  await rt?.close();
  await mistral?.stop();
});

const regionLine = (lines: string[]) => lines.find((l) => l.startsWith('  Mistral region:'));

describe('the Mistral region in use', () => {
  it('a loopback fake is `local`, in the banner and in /ready', async () => {
    const host = new URL(mistral.baseUrl).host;
    const config = loadConfig({ KOHAMI_ENV: 'test', MISTRAL_API_KEY: 'test-key', MISTRAL_BASE_URL: mistral.baseUrl });
    expect(regionLine(bannerLines(config, rt, rt.seed, true))).toBe(`  Mistral region:   local — ${host}, a loopback stand-in for Mistral`);
    const ready = await fetch(`${rt.url}/ready`);
    expect(ready.status).toBe(200);
    expect(await ready.json()).toEqual({ status: 'ready', mistralRegion: 'local' });
  });

  it('the default host is the SDK’s EU server, and the banner says so; the Global server is said to leave the EU', async () => {
    const production = { KOHAMI_ENV: 'production', DATABASE_URL: 'postgres://db.example:5432/kohami', MISTRAL_API_KEY: 'k' };
    const eu = loadConfig(production);
    const euLines = bannerLines(eu, { ...rt, mistralHost: mistralHostOf(eu.MISTRAL_BASE_URL, eu.KOHAMI_ENV) }, null, false);
    expect(regionLine(euLines)).toBe("  Mistral region:   EU — api.eu.mistral.ai, the SDK's EU server: inference stays in EU/EFTA data centres");
    const global = loadConfig({ ...production, MISTRAL_BASE_URL: 'https://api.mistral.ai/v1' });
    const globalLines = bannerLines(global, { ...rt, mistralHost: mistralHostOf(global.MISTRAL_BASE_URL, global.KOHAMI_ENV) }, null, false);
    expect(regionLine(globalLines)).toBe("  Mistral region:   Global — api.mistral.ai, the SDK's Global server: inference may run outside the EU");
  });
});
