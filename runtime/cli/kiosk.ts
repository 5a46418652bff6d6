import { createInterface } from 'node:readline';
import { parseArgs } from 'node:util';
import WebSocket from 'ws';
import { devTokensFile, readDevTokens } from '../db/dev-seed.ts';
import { boundedWait } from './bounded-wait.ts';
import { CONNECT_TIMEOUT_MS, READY_TIMEOUT_MS, runVoiceFile, VoiceFileError } from './voice-file-kiosk.ts';

/**
 * `npm run kiosk`: a terminal kiosk. Each line you type is a final STT transcript.
 * `npm run kiosk -- --voice FILE.wav [--out reply.wav]`: the WAV is the microphone (voice mode).
 */
const { values } = parseArgs({
  options: {
    url: { type: 'string', default: process.env.KOHAMI_URL ?? 'ws://127.0.0.1:8080/v1/kiosk' },
    token: { type: 'string' },
    resume: { type: 'boolean', default: false },
    voice: { type: 'string' },
    out: { type: 'string' },
    codec: { type: 'string', default: 'pcm' },
    'tail-ms': { type: 'string', default: '3000' },
    'settle-ms': { type: 'string', default: '20000' },
    help: { type: 'boolean', short: 'h', default: false },
  },
});

/** Overrides (text mode) the bound on the socket's opening and on `session.ready`, each (tests set it small). */
const WAIT_ENV = 'KOHAMI_KIOSK_WAIT_MS';

if (values.help) {
  process.stdout.write(
    [
      'npm run kiosk -- [--token T] [--url ws://host:port/v1/kiosk] [--resume]',
      '  a terminal kiosk: each line typed is a turn; /stop interrupts the reply, /end ends the session',
      'npm run kiosk -- --voice FILE.wav [--out reply.wav] [--codec pcm|opus] [--tail-ms 3000] [--settle-ms 20000]',
      '  the WAV (16 kHz mono s16) is the microphone; the spoken reply is written to --out',
      '  --codec opus: the microphone is sent as Opus packets and the reply asked for in Opus (PCM if the runtime has none)',
      'environment:',
      '  KOHAMI_URL        default --url',
      '  DEV_KIOSK_TOKEN   default --token (else the token npm start printed, from .data/dev-tokens.json)',
      `  ${WAIT_ENV}  text mode: how long to wait for the connection, then for session.ready (default ${CONNECT_TIMEOUT_MS} each)`,
      'exit codes: 0 session over, 1 connection, token or not a kohami runtime, 2 usage, 3 voice mode unavailable',
      '',
    ].join('\n'),
  );
  process.exit(0);
}

const token = values.token ?? process.env.DEV_KIOSK_TOKEN ?? (await readDevTokens(devTokensFile(process.env.PGLITE_DATA_DIR ?? '.data/pglite')!))?.kioskToken;
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
const connectMs = waitOverride ?? CONNECT_TIMEOUT_MS;
const readyMs = waitOverride ?? READY_TIMEOUT_MS;

/** The CLI cannot go on: says why, exit 1. */
function fail(message: string): never {
  process.stderr.write(`${message}\n`);
  process.exit(1);
}

const socket = new WebSocket(values.url, { headers: { authorization: `Bearer ${token}` } });
let turn = 0;
let streaming = false;
let started = false;
let sessionStarted!: () => void;
const ready = new Promise<void>((resolve) => (sessionStarted = resolve));
// Lines wait for the session, then for the previous reply: a piped script plays as a conversation.
let busy = true;
const pending: string[] = [];
function sendNext(): void {
  const text = pending.shift();
  if (text === undefined) return;
  busy = true;
  if (text === '/end') return void socket.send(JSON.stringify({ type: 'session.end' }));
  turn += 1;
  socket.send(JSON.stringify({ type: 'turn', turnId: `t${turn}`, transcript: text }));
}
const rl = createInterface({ input: process.stdin, output: process.stdout, prompt: 'vous> ' });
let inputOpen = true;
/** The prompt, while there is an input to read: a piped script's input ends before its replies come (and Node 24 throws on a closed interface). */
const prompt = (): void => {
  if (inputOpen) rl.prompt();
};

socket.on('unexpected-response', (_req, res) => {
  const hint = res.statusCode === 401 || res.statusCode === 403 ? 'check the token' : `is ${values.url} a kohami runtime's kiosk socket?`;
  fail(`refused: HTTP ${res.statusCode} (${hint})`);
});
socket.on('error', (err) => fail(`cannot connect to ${values.url}: ${err.message}`));
socket.on('close', () => {
  if (!started) fail('the runtime closed the connection before the session started');
  process.stdout.write('\n(connection closed)\n');
  process.exit(0);
});
socket.on('message', (raw, isBinary) => {
  const frame = isBinary ? null : kioskFrame(raw.toString());
  if (!frame) {
    socket.terminate();
    fail(`${values.url} sent a frame that is not the kiosk protocol: is it a kohami runtime?`);
  }
  switch (frame.type) {
    case 'session.ready':
      started = true;
      sessionStarted();
      process.stdout.write(`session ${String(frame.sessionId)}${frame.resumed ? ' (resumed)' : ''} — type a sentence, Enter to send; /stop interrupts, /end ends\n`);
      busy = false;
      sendNext();
      prompt();
      break;
    case 'reply.delta':
      if (!streaming) process.stdout.write('kohami> ');
      streaming = true;
      process.stdout.write(String(frame.text));
      break;
    case 'reply.done':
      if (!streaming) process.stdout.write(`kohami> ${String(frame.text)}`);
      process.stdout.write(`\n        [${String(frame.flux)}, ${String(frame.latencyMs)} ms${frame.interrupted ? ', interrupted' : ''}]\n`);
      streaming = false;
      busy = false;
      sendNext();
      prompt();
      break;
    case 'error':
      process.stdout.write(`\n[error ${String(frame.code)}] ${String(frame.message)}\n`);
      prompt();
      break;
    case 'session.closed':
      process.stdout.write(`\n[session closed: ${String(frame.reason)}]\n`);
      socket.close();
      break;
  }
});

rl.on('line', (line) => {
  const text = line.trim();
  if (!text) return prompt();
  if (text === '/stop') return void socket.send(JSON.stringify({ type: 'interrupt', turnId: `t${turn}` }));
  pending.push(text);
  if (!busy) sendNext();
});
rl.on('close', () => {
  inputOpen = false;
  if (pending.length === 0 && !busy) socket.close();
});

const opened = new Promise<void>((resolve) => socket.once('open', resolve));
await boundedWait(socket, opened, connectMs, () => new Error(`no answer from ${values.url} within ${connectMs / 1000} s (is a kohami runtime listening there?)`)).catch((err: Error) => fail(err.message));
socket.send(JSON.stringify({ type: 'session.start', resume: values.resume }));
await boundedWait(socket, ready, readyMs, () => new Error(`${values.url} accepted the connection but started no session within ${readyMs / 1000} s (is it a kohami runtime?)`)).catch((err: Error) => fail(err.message));

/** A JSON object with a string `type`, as every kiosk-protocol text frame is; null for anything else. */
function kioskFrame(text: string): (Record<string, unknown> & { type: string }) | null {
  try {
    const frame: unknown = JSON.parse(text);
    return typeof frame === 'object' && frame !== null && typeof (frame as { type?: unknown }).type === 'string' ? (frame as Record<string, unknown> & { type: string }) : null;
  } catch {
    return null;
  }
}
