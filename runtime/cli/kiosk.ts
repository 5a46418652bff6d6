import { createInterface } from 'node:readline';
import { parseArgs } from 'node:util';
import { DEFAULT_BACKOFF, DEFAULT_BOUNDS, KioskClient, type KioskError } from '@kohami/kiosk-client';
import { wsSocket } from '@kohami/kiosk-client/node';
import WebSocket from 'ws';
import { devTokensFile, readDevTokens } from '../db/dev-tokens-file.ts';
import { KIOSK_CLI_DATA_DIR, KIOSK_CLI_URL } from './kiosk-defaults.ts';
import { DEFAULT_SETTLE_MS, DEFAULT_TAIL_MS, runVoiceFile, VoiceFileError } from './voice-file-kiosk.ts';

/**
 * `npm run kiosk`: a terminal kiosk. Each line you type is a final STT transcript.
 * `npm run kiosk -- --voice FILE.wav [--out reply.wav]`: the WAV is the microphone (voice mode).
 */
const { values } = parseArgs({
  options: {
    url: { type: 'string', default: process.env.KOHAMI_URL ?? KIOSK_CLI_URL },
    token: { type: 'string' },
    resume: { type: 'boolean', default: false },
    voice: { type: 'string' },
    out: { type: 'string' },
    codec: { type: 'string', default: 'pcm' },
    'tail-ms': { type: 'string', default: String(DEFAULT_TAIL_MS) },
    'settle-ms': { type: 'string', default: String(DEFAULT_SETTLE_MS) },
    help: { type: 'boolean', short: 'h', default: false },
  },
});

/** Overrides (text mode) the bound on the socket's opening and on `session.ready`, each (tests set it small). */
const WAIT_ENV = 'KOHAMI_KIOSK_WAIT_MS';

if (values.help) {
  process.stdout.write(
    [
      'usage: npm run kiosk -- [--token T] [--url ws://host:port/v1/kiosk] [--resume]',
      '  a terminal kiosk: each line typed is a turn; /stop interrupts the reply, /end ends the session;',
      `  a lost connection is resumed (the same session, or a new one once it is gone), retrying for as long as it takes (every ${DEFAULT_BACKOFF.steadyDelayMs / 1000} s at most)`,
      'npm run kiosk -- --voice FILE.wav [--out reply.wav] [--codec pcm|opus] [--tail-ms 3000] [--settle-ms 20000]',
      '  the WAV (16 kHz mono s16) is the microphone; the spoken reply is written to --out',
      '  --codec opus: the microphone is sent as Opus packets and the reply asked for in Opus (PCM if the runtime has none)',
      'environment:',
      '  KOHAMI_URL        default --url',
      '  DEV_KIOSK_TOKEN   default --token (else the token npm start printed, from .data/pglite/dev-tokens.json)',
      `  ${WAIT_ENV}  text mode: how long to wait for the connection, then for session.ready (default ${DEFAULT_BOUNDS.connectTimeoutMs} each)`,
      'exit codes: 0 session over, 1 connection, token or not a kohami runtime, 2 usage, 3 voice mode unavailable',
      '',
    ].join('\n'),
  );
  process.exit(0);
}

const token = values.token ?? process.env.DEV_KIOSK_TOKEN ?? (await readDevTokens(devTokensFile(process.env.PGLITE_DATA_DIR ?? KIOSK_CLI_DATA_DIR)!).catch(() => null))?.kioskToken;
if (!token) {
  process.stderr.write('no kiosk token: pass --token (printed by npm start) or set DEV_KIOSK_TOKEN\n');
  process.exit(2);
}

if (values.voice !== undefined) {
  const tailMs = Number(values['tail-ms']);
  const settleMs = Number(values['settle-ms']);
  if (!(tailMs >= 0) || !(settleMs >= 0)) {
    process.stderr.write('--tail-ms and --settle-ms take a number of milliseconds\n');
    process.exit(2);
  }
  const codec = values.codec;
  if (codec !== 'pcm' && codec !== 'opus') {
    process.stderr.write(`--codec takes pcm or opus, not ${codec}\n`);
    process.exit(2);
  }
  try {
    await runVoiceFile({ url: values.url, token, wav: values.voice, out: values.out, codec, tailMs, settleMs, write: (t) => process.stdout.write(t) });
    process.exit(0);
  } catch (err) {
    if (!(err instanceof VoiceFileError)) throw err;
    process.stderr.write(`${err.message}\n`);
    process.exit(err.exitCode);
  }
}
if (values.out !== undefined) {
  process.stderr.write('--out needs --voice FILE.wav\n');
  process.exit(2);
}

const waitOverride = process.env[WAIT_ENV] === undefined ? undefined : Number(process.env[WAIT_ENV]);
if (waitOverride !== undefined && !(waitOverride > 0)) {
  process.stderr.write(`${WAIT_ENV} takes a number of milliseconds above 0\n`);
  process.exit(2);
}
const connectMs = waitOverride ?? DEFAULT_BOUNDS.connectTimeoutMs;
const readyMs = waitOverride ?? DEFAULT_BOUNDS.readyTimeoutMs;

/** The CLI cannot go on: says why, exit 1. */
function fail(message: string): never {
  process.stderr.write(`${message}\n`);
  process.exit(1);
}

/** What a failed connection says: the package's message, with a hint where the CLI knows one. */
function connectionProblem(err: KioskError): string {
  if (err.code === 'refused') return `${err.message} (${err.status === 401 || err.status === 403 ? 'check the token' : `is ${values.url} a kohami runtime's kiosk socket?`})`;
  if (err.code === 'bad_frame') return `${values.url} sent a frame that is not the kiosk protocol: is it a kohami runtime?`;
  return err.message;
}

const client = new KioskClient({ url: values.url, token, socket: wsSocket(WebSocket), connectTimeoutMs: connectMs, readyTimeoutMs: readyMs });
let streaming = false;
// Lines wait for the session, then for the previous reply: a piped script plays as a conversation.
let busy = true;
const pending: string[] = [];
function sendNext(): void {
  const text = pending.shift();
  if (text === undefined) return;
  busy = true;
  if (text === '/end') return void client.end().catch((err: KioskError) => fail(err.message));
  // The reply arrives as events (printed as it streams); a refused or lost turn lets the next line go.
  client.turn(text).reply.catch((err: KioskError) => {
    if (err.code === 'closed' || err.code === 'resume_failed') return;
    // A refused turn's error frame is printed already (below); a timed-out or lost one is said here.
    if (err.code !== 'turn_refused') process.stdout.write(`\n[${err.code}] ${err.message}\n`);
    busy = false;
    sendNext();
    prompt();
  });
}
const rl = createInterface({ input: process.stdin, output: process.stdout, prompt: 'vous> ' });
let inputOpen = true;
/** The prompt, while there is an input to read: a piped script's input ends before its replies come (and Node 24 throws on a closed interface). */
const prompt = (): void => {
  if (inputOpen) rl.prompt();
};

client.on('session.ready', (frame) => {
  if (!frame.resumed || busy) return;
  process.stdout.write(`\n(reconnected: session ${frame.sessionId} resumed)\n`);
});
client.on('reply.delta', (frame) => {
  if (!streaming) process.stdout.write('kohami> ');
  streaming = true;
  process.stdout.write(frame.text);
});
client.on('reply.done', (frame) => {
  if (!streaming) process.stdout.write(`kohami> ${frame.text}`);
  process.stdout.write(`\n        [${frame.flux}, ${frame.latencyMs} ms${frame.interrupted ? ', interrupted' : ''}]\n`);
  streaming = false;
  busy = false;
  sendNext();
  prompt();
});
client.on('error', (frame) => {
  process.stdout.write(`\n[error ${frame.code}] ${frame.message}\n`);
  prompt();
});
client.on('session.closed', (frame) => process.stdout.write(`\n[session closed: ${frame.reason}]\n`));
client.on('client.reconnecting', ({ attempt, delayMs }) => process.stdout.write(`\n(connection lost: reconnecting, attempt ${attempt} in ${delayMs} ms)\n`));
client.on('client.error', (err) => {
  // Not the kiosk protocol: the runtime is not what it claims, stop rather than guess.
  if (err.code === 'bad_frame') fail(connectionProblem(err));
  if (err.code === 'resume_failed') fail(err.message);
});

rl.on('line', (line) => {
  const text = line.trim();
  if (!text) return prompt();
  if (text === '/stop') return void (client.state === 'ready' && client.interrupt());
  pending.push(text);
  if (!busy) sendNext();
});
rl.on('close', () => {
  inputOpen = false;
  if (pending.length === 0 && !busy) client.close();
});

const ready = await client.connect({ resume: values.resume }).catch((err: KioskError) => fail(connectionProblem(err)));
client.on('client.closed', () => {
  process.stdout.write('\n(connection closed)\n');
  process.exit(0);
});
process.stdout.write(`session ${ready.sessionId}${ready.resumed ? ' (resumed)' : ''} — type a sentence, Enter to send; /stop interrupts, /end ends\n`);
busy = false;
sendNext();
prompt();
// A piped script with nothing to say: its input is already over.
if (!inputOpen && !busy) client.close();
