import { parseArgs } from 'node:util';
import { MISTRAL_HOSTS, mistralHostOf } from '../../adapters/mistral/base-url.ts';
import { ConfigError, loadConfig } from '../config.ts';
import { DEFAULT_BOUNDS, messageOf, type CheckContext } from './mistral-check/context.ts';
import { chatProbe, embeddingProbe, retryAfterRow, sdkClient, speechProbes, voiceProbe } from './mistral-check/http-probes.ts';
import { probeSpeech } from './mistral-check/probe-speech.ts';
import { subagentProbe } from './mistral-check/subagent-probe.ts';
import { renderText, Report, type Row } from './mistral-check/report.ts';
import { eventsRow, fieldProbes, idleProbe, transcriptionProbes, Sockets, type ProbePhrase } from './mistral-check/transcription-probes.ts';

/**
 * `npm run mistral:check -- [--audio A.wav --audio B.wav] [--json] [--idle-s N] [--timeout-s N]`: with
 * MISTRAL_API_KEY (and MISTRAL_BASE_URL), one short probe of Mistral's service per assumption the
 * runtime makes of it — the realtime socket's set-up and flushes, speech, the voice list, a streamed
 * chat with the agent's tool, an embedding, the host's region, Retry-After — then a table of what was
 * observed, the settings to use and what it cost. Exit 0: no contract break; 1: a break; 2: no key or
 * bad input. The key is never printed. docs/operations.md#checking-mistrals-service-npm-run-mistralcheck reads
 * the report row by row.
 */
const USAGE = 'usage: npm run mistral:check -- [--audio A.wav --audio B.wav] [--json] [--idle-s N] [--timeout-s N]';
const NO_KEY =
  'mistral:check probes Mistral\'s service with your key, and MISTRAL_API_KEY is not set.\n' +
  'Set it (and MISTRAL_BASE_URL if not the default) and run again: the probes cost well under a cent.';
/** The whole run's bound, unless told: the probes besides the idle socket's, with room for a slow service. */
const DEFAULT_TIMEOUT_S = 90;
/** Past the idle socket's wait, the whole run has this long at least. */
const AFTER_IDLE_S = 30;
const MAX_SECONDS = 600;
/** The EU server's base URL, from the whitelist: the host it labels EU. */
const EU_BASE_URL = `https://${Object.keys(MISTRAL_HOSTS).find((host) => MISTRAL_HOSTS[host]!.region === 'EU')!}/v1`;

export interface CheckIo {
  out: (line: string) => void;
  err: (line: string) => void;
  env?: NodeJS.ProcessEnv;
}

interface Options {
  help: boolean;
  audio: string[];
  json: boolean;
  /** Unset: a second past STT_IDLE_CLOSE_MS. */
  idleS: number | undefined;
  /** Unset: DEFAULT_TIMEOUT_S, or longer when the idle socket's wait needs it. */
  timeoutS: number | undefined;
}

/** Runs the check; resolves to its exit code. */
export async function checkMain(argv: string[], io: CheckIo): Promise<number> {
  let options: Options;
  let context: Omit<CheckContext, 'signal'>;
  let timeoutS: number;
  try {
    options = parseOptions(argv);
    if (options.help) {
      io.out(USAGE);
      return 0;
    }
    const config = loadConfig(io.env ?? process.env);
    if (!config.MISTRAL_API_KEY) {
      io.err(NO_KEY);
      return 2;
    }
    // The idle socket is watched a second past the runtime's own idle close, unless told otherwise.
    const idleMs = options.idleS === undefined ? config.STT_IDLE_CLOSE_MS + 1_000 : options.idleS * 1000;
    context = { config, apiKey: config.MISTRAL_API_KEY, report: new Report(), bounds: { ...DEFAULT_BOUNDS, idleMs } };
    timeoutS = options.timeoutS ?? Math.max(DEFAULT_TIMEOUT_S, idleMs / 1000 + AFTER_IDLE_S);
  } catch (err) {
    io.err(err instanceof ConfigError ? err.message : `mistral:check: ${messageOf(err)}`);
    return 2;
  }
  let speech;
  try {
    speech = await probeSpeech(options.audio);
  } catch (err) {
    io.err(err instanceof ConfigError ? err.message : `mistral:check: no speech to probe with: ${messageOf(err)}`);
    return 2;
  }
  const rows = await probeAll(context, speech.phrases, timeoutS);
  const { report, config } = context;
  const header = [`mistral:check — ${config.MISTRAL_BASE_URL}`, `speech probed with ${speech.source}`];
  if (options.json) {
    io.out(JSON.stringify({ baseUrl: config.MISTRAL_BASE_URL, speechSource: speech.source, rows, settings: report.advice, spent: report.spent, rateLimits: report.rateLimits }, null, 2));
  } else {
    for (const line of renderText(header, rows, report.advice, report.spent)) io.out(line);
  }
  return rows.some((r) => r.verdict === 'break') ? 1 : 0;
}

/** Every probe, concurrently where they are independent, within the whole run's bound. */
async function probeAll(base: Omit<CheckContext, 'signal'>, phrases: ProbePhrase[], timeoutS: number): Promise<Row[]> {
  const run = new AbortController();
  const timer = setTimeout(() => run.abort(new Error(`the whole run's bound (${timeoutS} s)`)), timeoutS * 1000);
  const ctx: CheckContext = { ...base, signal: run.signal };
  const sockets = new Sockets();
  const client = sdkClient(ctx);
  regionRow(ctx);
  const lanes = await Promise.allSettled([
    transcriptionProbes(ctx, sockets, phrases),
    fieldProbes(ctx, sockets),
    idleProbe(ctx, sockets),
    speechProbes(ctx, client),
    voiceProbe(ctx),
    chatProbe(ctx),
    subagentProbe(ctx),
    embeddingProbe(ctx),
  ]);
  clearTimeout(timer);
  sockets.closeAll();
  eventsRow(ctx, sockets);
  retryAfterRow(ctx);
  ctx.report.spent.audioSeconds = sockets.audioSeconds;
  const failure = lanes.find((l): l is PromiseRejectedResult => l.status === 'rejected' && !run.signal.aborted);
  const missing = run.signal.aborted ? `not finished within ${messageOf(run.signal.reason)}` : `not measured: ${failure ? messageOf(failure.reason) : 'no probe answered'}`;
  return ctx.report.all(missing);
}

/** The host's region, by the whitelist's own labels (the SDK's: `api.mistral.ai` is Global). */
function regionRow(ctx: CheckContext): void {
  const { host, region, note } = mistralHostOf(ctx.config.MISTRAL_BASE_URL, ctx.config.KOHAMI_ENV);
  if (region === 'EU' || region === 'local') return ctx.report.set('region', 'ok', `${host}: ${region} (${note})`);
  ctx.report.advise('MISTRAL_BASE_URL', EU_BASE_URL, `${host} is ${region === 'Global' ? 'Global' : 'of no confirmed region'}; ${new URL(EU_BASE_URL).host} keeps inference in the EU`);
  ctx.report.set('region', 'note', `${host}: ${region} (${note})`);
}

function parseOptions(argv: string[]): Options {
  let values: { audio?: string[]; json?: boolean; 'idle-s'?: string; 'timeout-s'?: string; help?: boolean };
  try {
    ({ values } = parseArgs({
      args: argv,
      options: { audio: { type: 'string', multiple: true }, json: { type: 'boolean' }, 'idle-s': { type: 'string' }, 'timeout-s': { type: 'string' }, help: { type: 'boolean' } },
    }));
  } catch (err) {
    throw new ConfigError(`${messageOf(err)}; ${USAGE}`);
  }
  return {
    help: values.help ?? false,
    audio: values.audio ?? [],
    json: values.json ?? false,
    idleS: seconds(values['idle-s'], '--idle-s', 0),
    timeoutS: seconds(values['timeout-s'], '--timeout-s', 1),
  };
}

function seconds(value: string | undefined, name: string, min: number): number | undefined {
  if (value === undefined) return undefined;
  const n = Number(value);
  if (!Number.isFinite(n) || n < min || n > MAX_SECONDS) throw new ConfigError(`${name}: seconds from ${min} to ${MAX_SECONDS} (got "${value}"); ${USAGE}`);
  return n;
}

if (import.meta.url === `file://${process.argv[1]}`) {
  checkMain(process.argv.slice(2), { out: (l) => process.stdout.write(`${l}\n`), err: (l) => process.stderr.write(`${l}\n`) }).then(
    // Exits now: kept-alive HTTP connections and a closing socket would hold the process a while longer.
    (code) => process.exit(code),
    (err: unknown) => {
      process.stderr.write(`mistral:check failed: ${messageOf(err)}\n`);
      process.exit(2);
    },
  );
}
