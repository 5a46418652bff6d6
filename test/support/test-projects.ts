/**
 * The suite's two vitest projects (vitest.config.ts). `external` holds the files that drive something
 * outside the test process — headless Chromium, a child process (a runtime, a command, npm start), nginx
 * — slow to start and heavy on a shared machine; `in-process` the rest. `npm test` runs both;
 * `npx vitest run --project in-process` the quick half. test/unit/test-projects.test.ts keeps this
 * list in step with what the files import.
 */
export const EXTERNAL_TESTS = [
  'packages/kiosk-client/test/browser-capture-resampler.test.ts',
  'packages/kiosk-client/test/browser-playback.test.ts',
  'packages/kiosk-client/test/browser-refused.test.ts',
  'packages/kiosk-client/test/browser-speech-gate.test.ts',
  'packages/kiosk-client/test/build.test.ts',
  'packages/kiosk-client/test/readme.test.ts',
  'packages/kiosk-client/test/runtime-restart.test.ts',
  'test/e2e/caregiver-page.test.ts',
  'test/e2e/commands.test.ts',
  'test/e2e/deploy.test.ts',
  'test/e2e/dream.test.ts',
  'test/e2e/image.test.ts',
  'test/e2e/kiosk-cli-bounds.test.ts',
  'test/e2e/kiosk-page-gesture.test.ts',
  'test/e2e/kiosk-page-opus.test.ts',
  'test/e2e/kiosk-page-unattended.test.ts',
  'test/e2e/kiosk-page.test.ts',
  'test/e2e/kiosk-voice-file-opus.test.ts',
  'test/e2e/mistral-check.test.ts',
  'test/e2e/multi-process.test.ts',
  'test/e2e/ops-console-bounds.test.ts',
  'test/e2e/ops-console-restart.test.ts',
  'test/e2e/ops-console-traffic.test.ts',
  'test/e2e/ops-console-voice.test.ts',
  'test/e2e/ops-console.test.ts',
  'test/e2e/process.test.ts',
  'test/e2e/scale-out.test.ts',
  'test/faults/caregiver-alerts-across-processes.test.ts',
  'test/faults/data-dir-lock.test.ts',
  'test/faults/demo-tokens.test.ts',
  'test/faults/dream-job-expiry.test.ts',
  'test/faults/embedded-database-access.test.ts',
  'test/faults/erasure-across-processes.test.ts',
  'test/faults/erasure-race.test.ts',
  'test/faults/npm-start-signals.test.ts',
  'test/faults/process-faults.test.ts',
  'test/unit/cache-evaluate.test.ts',
  'test/unit/runtime-process-start.test.ts',
];

/** Every test file of the suite. */
export const ALL_TESTS = ['test/**/*.test.ts', 'packages/*/test/**/*.test.ts'];

/**
 * What makes a file external: it imports a child-process API or Playwright, or calls a helper that
 * starts Chromium, a runtime process, npm start or nginx.
 */
export const EXTERNAL_MARK = /from 'node:child_process'|from 'playwright-core'|\b(launchKioskBrowser|startKioskBrowserSession|launchConsoleBrowser|runtimeProcess|spawnRuntime|npmStart|startLoadBalancer)\(/;
