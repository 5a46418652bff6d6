/**
 * V8 flags for the suite's own Node processes: vitest's workers (vitest.config.ts) and the runtimes and
 * commands the tests start as children. `--liftoff-only` compiles WebAssembly with V8's baseline
 * compiler alone: otherwise every process that opens PGlite has the optimizing compiler recompile the
 * whole database engine in the background, ~1.7 s of CPU a process (on the runtime's first query or
 * after its close, whether the process lives on or not), which a test's few queries never repay and a
 * 2-core machine pays in the suite's time. Measured in docs/testing.md. `npm start` and the runtime keep
 * V8's defaults: a server that runs for days earns that compile back.
 */
export const TEST_NODE_FLAGS: readonly string[] = ['--liftoff-only'];
