import { Writable } from 'node:stream';
import { loadConfig } from '../../runtime/config.ts';
import { createLogger } from '../../runtime/logger.ts';
import { startRuntime, type Runtime, type RuntimeOverrides } from '../../runtime/runtime.ts';
import { offeredCalibrationFile } from './cache-calibration.ts';
import { testDatabaseImage } from './database-image.ts';

export const KIOSK_TOKEN = 'kiosk_test_token_marie_0000';
export const ADMIN_TOKEN = 'admin_test_token_0000000000';

/** Every log line the runtime writes, kept in memory so tests can search it. */
export class LogCapture extends Writable {
  readonly lines: string[] = [];
  override _write(chunk: Buffer, _enc: string, done: () => void): void {
    this.lines.push(chunk.toString());
    done();
  }
  get text(): string {
    return this.lines.join('');
  }
}

export interface TestRuntime extends Runtime {
  logs: LogCapture;
  wsUrl: string;
}

/**
 * What a test runtime leaves out unless its test asks for it: the nightly dream's schedule and
 * workers, and the OpenAPI document with Swagger UI. A test of either passes `true`.
 */
export const TEST_RUNTIME_SKIPS = { dreamScheduler: false, apiDocs: false } as const satisfies RuntimeOverrides;

/** A test runtime's settings: a throwaway PGlite, port 0, debug logs, the demo tokens, and `env` on top. */
export function testRuntimeConfig(env: Record<string, string> = {}) {
  return loadConfig({
    KOHAMI_ENV: 'test',
    PORT: '0',
    PGLITE_DATA_DIR: 'memory://',
    LOG_LEVEL: 'debug',
    DEV_KIOSK_TOKEN: KIOSK_TOKEN,
    DEV_ADMIN_TOKEN: ADMIN_TOKEN,
    SEMANTIC_CACHE_CALIBRATION_FILE: offeredCalibrationFile(),
    ...env,
  });
}

/**
 * The real runtime on a throwaway PGlite (or `env`'s data directory), port 0, with demo data seeded
 * under known tokens; its database starts from the test run's migrated image.
 */
export async function startTestRuntime(overrides: RuntimeOverrides = {}, env: Record<string, string> = {}): Promise<TestRuntime> {
  const logs = new LogCapture();
  const runtime = await startRuntime(testRuntimeConfig(env), { logger: createLogger('debug', logs), databaseImage: testDatabaseImage(), ...TEST_RUNTIME_SKIPS, ...overrides });
  return Object.assign(runtime, { logs, wsUrl: `${runtime.url.replace(/^http/, 'ws')}/v1/kiosk` });
}

/** An authenticated JSON call to the runtime's HTTP API (`as: null` sends no token). */
export function adminApi(rt: Runtime, token = ADMIN_TOKEN) {
  return async (method: string, path: string, body?: unknown, as: string | null = token) => {
    const res = await fetch(`${rt.url}${path}`, {
      method,
      headers: { ...(as ? { authorization: `Bearer ${as}` } : {}), ...(body ? { 'content-type': 'application/json' } : {}) },
      ...(body ? { body: JSON.stringify(body) } : {}),
    });
    // Bodies are checked field by field; their shapes are the routes' zod schemas.
    return { status: res.status, body: (await res.json()) as Record<string, any> }; // eslint-disable-line @typescript-eslint/no-explicit-any
  };
}
