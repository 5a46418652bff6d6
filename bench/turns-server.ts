import pino from 'pino';
import { VOXTRAL_STREAMING_DELAY_MS } from '../adapters/voice/mistral-transcriber.ts';
import { createLogger } from '../runtime/logger.ts';
import { startRuntime } from '../runtime/runtime.ts';
import { benchRuntimeConfig } from './support/runtime-config.ts';
import { grantAllConsents, seedBenchSeniors } from './support/seed-seniors.ts';

/**
 * The runtime side of bench:turns, in its own process: the real runtime (embedded PGlite, voice mode)
 * against the fakes at MISTRAL_BASE_URL, with the settings of BENCH_RUNTIME_ENV (JSON, e.g.
 * {"PREEMPTIVE_TURN":"off"}) over the runtime's defaults. One senior per lane, token `kiosk_turns_<i>`, preferred name
 * `Turns<i>` (the fakes tell whose script a socket plays by its audio).
 *   argv: lanes
 */
const lanes = Number(process.argv[2]);
const config = benchRuntimeConfig(JSON.parse(process.env.BENCH_RUNTIME_ENV ?? '{}') as Record<string, string>);
const rt = await startRuntime(config, { logger: createLogger(process.env.BENCH_LOG ?? 'silent', pino.destination(2)), rateLimit: { perSecond: 1e6, burst: 1e6 } });
await seedBenchSeniors(rt, lanes, { tokenPrefix: 'kiosk_turns_', namePrefix: 'Turns' });
await grantAllConsents(rt);
process.send!({ type: 'ready', url: `${rt.url.replace('http', 'ws')}/v1/kiosk`, sttDelayMs: config.STT_STREAMING_DELAY_MS ?? VOXTRAL_STREAMING_DELAY_MS });
// The speculative turns by outcome, when the bench asks (its last numbers, after the run).
process.on('message', (message: { type?: string }) => {
  if (message.type !== 'speculations') return;
  void rt.metrics.preemptiveTurns.get().then(({ values }) => process.send!({ type: 'speculations', counts: Object.fromEntries(values.map((v) => [String(v.labels.outcome), v.value])) }));
});
process.on('SIGTERM', () => process.exit(0));
