import { createInterface } from 'node:readline';
import { parseArgs } from 'node:util';
import WebSocket from 'ws';
import { devTokensFile, readDevTokens } from './dev-seed.ts';
import { runVoiceFile, VoiceFileError } from './kiosk/voice-file-kiosk.ts';

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
    'tail-ms': { type: 'string', default: '3000' },
    'settle-ms': { type: 'string', default: '20000' },
  },
});

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
  try {
    await runVoiceFile({ url: values.url, token, wav: values.voice, out: values.out, tailMs, settleMs, write: (t) => process.stdout.write(t) });
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

const socket = new WebSocket(values.url, { headers: { authorization: `Bearer ${token}` } });
let turn = 0;
let streaming = false;
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

socket.on('unexpected-response', (_req, res) => {
  process.stderr.write(`refused: HTTP ${res.statusCode} (check the token)\n`);
  process.exit(1);
});
socket.on('error', (err) => {
  process.stderr.write(`cannot connect to ${values.url}: ${err.message}\n`);
  process.exit(1);
});
socket.on('open', () => socket.send(JSON.stringify({ type: 'session.start', resume: values.resume })));
socket.on('close', () => {
  process.stdout.write('\n(connection closed)\n');
  process.exit(0);
});
socket.on('message', (raw) => {
  const frame = JSON.parse(raw.toString()) as Record<string, unknown>;
  switch (frame.type) {
    case 'session.ready':
      process.stdout.write(`session ${String(frame.sessionId)}${frame.resumed ? ' (resumed)' : ''} — type a sentence, Enter to send; /stop interrupts, /end ends\n`);
      busy = false;
      sendNext();
      rl.prompt();
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
      rl.prompt();
      break;
    case 'error':
      process.stdout.write(`\n[error ${String(frame.code)}] ${String(frame.message)}\n`);
      rl.prompt();
      break;
    case 'session.closed':
      process.stdout.write(`\n[session closed: ${String(frame.reason)}]\n`);
      socket.close();
      break;
  }
});

rl.on('line', (line) => {
  const text = line.trim();
  if (!text) return rl.prompt();
  if (text === '/stop') return void socket.send(JSON.stringify({ type: 'interrupt', turnId: `t${turn}` }));
  pending.push(text);
  if (!busy) sendNext();
});
rl.on('close', () => {
  if (pending.length === 0 && !busy) socket.close();
});
