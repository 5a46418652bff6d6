import { ConfigError, loadConfig, type Config } from './config.ts';
import type { Database } from './db/database.ts';
import { KIOSK_CLI_DATA_DIR, KIOSK_CLI_URL } from './cli/kiosk-defaults.ts';
import { exitOnHelp } from './cli/usage.ts';
import { keptDemoTokens } from './db/dev-seed.ts';
import { devTokensFile, devTokensFileFor, readDevTokens, type DevTokens } from './db/dev-tokens-file.ts';
import { SHUTDOWN_MARGIN_MS, startRuntime, type Runtime, type RuntimeOverrides } from './runtime.ts';
import { offlineVoiceName } from './voice/offline-speaker.ts';

/** What the start banner says of a started runtime. */
export type BannerRuntime = Pick<Runtime, 'url' | 'modelMode' | 'mistralHost' | 'semanticCacheSetting' | 'recallFloorSetting' | 'voiceInput'> & { db: Pick<Database, 'engine' | 'location'> };

/**
 * The start banner: where to connect (the kiosk socket, and the browser kiosk page README's quick start
 * points to), what runs offline, and the demo tokens when there are some. `tokensFile`: whether
 * `npm run kiosk` finds the demo kiosk token by itself; its `--url` is given when the socket is not its default.
 */
export function bannerLines(config: Config, runtime: BannerRuntime, demo: DevTokens | null, tokensFile: boolean): string[] {
  const ws = runtime.url.replace(/^http/, 'ws');
  const lines = [
    '',
    `  kohami-runtime listening on ${runtime.url}  (${config.KOHAMI_ENV})`,
    `  kiosk WebSocket:  ${ws}/v1/kiosk`,
    // With the demo token in the link the page has it filled in (click « Connecter »); otherwise it asks for one.
    `  kiosk page:       ${runtime.url}/kiosk${demo ? `?token=${encodeURIComponent(demo.kioskToken)}` : ''}  (in a browser: voice and typed turns)`,
    `  database:         ${runtime.db.engine} (${runtime.db.location})`,
    `  models:           ${runtime.modelMode === 'mistral' ? `Mistral (agent ${config.MISTRAL_AGENT_MODEL}, sub-agents ${config.MISTRAL_SUBAGENT_MODEL}, mistral-embed)` : 'OFFLINE — no MISTRAL_API_KEY: deterministic French replies, local lexical embedder'}`,
    ...(runtime.mistralHost ? [`  Mistral region:   ${runtime.mistralHost.region} — ${runtime.mistralHost.host}, ${runtime.mistralHost.note}`] : []),
    `  semantic cache:   ${runtime.semanticCacheSetting}`,
    `  recall floor:     ${runtime.recallFloorSetting}`,
    runtime.voiceInput
      ? `  voice:            Voxtral (speech-to-text ${config.MISTRAL_STT_MODEL}, speech ${config.MISTRAL_TTS_MODEL} · ${config.MISTRAL_TTS_VOICE}, ${offlineVoiceName(config)} as fallback)`
      : `  voice:            replies spoken offline by ${offlineVoiceName(config)}; voice INPUT needs MISTRAL_API_KEY (no offline speech-to-text): type your turns`,
    ...(runtime.modelMode === 'offline' ? ['  derivations:      offline — every turn scores a neutral mood (50), with no summary, and sessions yield no facts'] : []),
  ];
  if (demo) {
    lines.push(
      `  demo senior:      Marie (${demo.seniorId})`,
      `  demo kiosk token: ${demo.kioskToken}`,
      `  demo admin token: ${demo.adminToken}`,
      `  talk to it:       ${kioskCommand(`${ws}/v1/kiosk`, tokensFile ? null : demo.kioskToken)}`,
    );
  } else if (config.KOHAMI_ENV !== 'production') {
    lines.push('  demo data:        already seeded (tokens are stored hashed: set DEV_KIOSK_TOKEN/DEV_ADMIN_TOKEN before the first start to choose them)');
  }
  return lines;
}

/** `npm run kiosk` with what it cannot find by itself: the socket when not its default, the token when not in its file. */
function kioskCommand(kioskUrl: string, token: string | null): string {
  const args = [...(kioskUrl === KIOSK_CLI_URL ? [] : ['--url', kioskUrl]), ...(token ? ['--token', token] : [])];
  return `npm run kiosk${args.length > 0 ? ` -- ${args.join(' ')}` : ''}`;
}

/** `npm start`: the runtime on its configuration, with a banner saying where to connect. */
export async function main(overrides: RuntimeOverrides = {}, bannerExtra: string[] = []): Promise<void> {
  let config;
  try {
    config = loadConfig();
  } catch (err) {
    if (err instanceof ConfigError) {
      process.stderr.write(`${err.message}\n`);
      process.exit(1);
    }
    throw err;
  }
  const runtime = await startRuntime(config, overrides);
  const tokensFile = devTokensFileFor(config);
  const demo = runtime.seed ?? (tokensFile ? await keptDemoTokens(tokensFile, runtime.directory, (message) => runtime.logger.warn(message)) : null);
  // `npm run kiosk` reads the tokens file of the default data directory, when it holds the printed token.
  const cliFindsToken = tokensFile !== null && tokensFile === devTokensFile(KIOSK_CLI_DATA_DIR) && demo !== null && (await readDevTokens(tokensFile).catch(() => null))?.kioskToken === demo.kioskToken;
  process.stdout.write(`${[...bannerLines(config, runtime, demo, cliFindsToken), ...bannerExtra].join('\n')}\n\n`);

  stopOnSignals(runtime, config.SHUTDOWN_DRAIN_MS + SHUTDOWN_MARGIN_MS);
}

/**
 * SIGTERM or SIGINT begins the drain, bounded by `boundMs` (SHUTDOWN_DRAIN_MS + margin). Each reaches a
 * process under `npm start` twice — from its process group (a terminal's Ctrl-C, systemd's control-group
 * kill) and forwarded by npm — so a repeated one never cuts the drain short: Node's default for it would
 * kill the process with the derivations in flight. SIGQUIT (Ctrl-\ in a terminal) is the deliberate
 * "stop now": the process exits at once and what the drain had left is lost, logged as a count.
 */
export function stopOnSignals(runtime: Pick<Runtime, 'logger' | 'close' | 'closeJobs'>, boundMs: number): void {
  let draining = false;
  const drain = (signal: NodeJS.Signals) => {
    if (draining) {
      runtime.logger.warn({ signal }, 'already draining: the signal is ignored (SIGQUIT stops now)');
      return;
    }
    draining = true;
    runtime.logger.info({ signal, boundMs }, 'shutting down: draining the derivations (SIGQUIT stops now)');
    const timer = setTimeout(() => {
      runtime.logger.error('shutdown timed out');
      process.exit(1);
    }, boundMs);
    timer.unref();
    runtime.close().then(
      () => process.exit(0),
      (err: unknown) => {
        runtime.logger.error({ err }, 'shutdown failed');
        process.exit(1);
      },
    );
  };
  process.on('SIGTERM', drain);
  process.on('SIGINT', drain);
  process.once('SIGQUIT', () => {
    runtime.logger.error({ pending: runtime.closeJobs.pending }, 'SIGQUIT: stopping now, the pending derivations are lost');
    process.exit(1);
  });
}

export function exitOnStartFailure(err: unknown): never {
  process.stderr.write(`kohami-runtime failed to start: ${err instanceof Error ? err.message : String(err)}\n`);
  process.exit(1);
}

/** `npm start -- --help`; the settings are the environment's, as dev:inspect's. */
export const START_USAGE = `usage: npm start
  the runtime, on the settings of the environment or .env (every one: docs/configuration.md);
  it prints where to connect, then runs until SIGTERM or Ctrl-C, which drain it (Ctrl-\\ stops it now)`;

if (import.meta.url === `file://${process.argv[1]}`) {
  exitOnHelp(START_USAGE);
  main().catch(exitOnStartFailure);
}
