import { exitOnContractViolation } from '../test/support/contract-violations.ts';
import { FakeMistral } from '../test/support/fake-mistral.ts';
import { FakeVoxtral, type ScriptedUtterance } from '../test/support/fake-voxtral.ts';

/**
 * The speech services of bench:voice in their own process, so that their work and timers neither
 * load the runtime nor skew the generator: the loopback fakes of the tests with fixed latencies.
 * Each session's phrases are scripted as its kiosk starts them (message `script`, by the senior's name,
 * which reaches the recognizer as its context bias), so its interim words are its own: a speculative
 * turn on them can be the turn. A socket with no script of its own is answered from the shared queue.
 *   argv: sttLatencyMs ttsLatencyMs transcript…
 */
exitOnContractViolation();
const [sttMs, ttsMs, ...transcripts] = process.argv.slice(2);
const voxtral = new FakeVoxtral();
voxtral.transcriptionLatencyMs = Number(sttMs);
voxtral.speechLatencyMs = Number(ttsMs);
const mistral = await new FakeMistral(voxtral).start();
// The agent answers at once: its first sentence is short, as the chunker sends a first clause early.
mistral.mode = { kind: 'stream', chunks: ['Bien sûr, Marie, ', 'je vous écoute avec plaisir. ', 'Parlons-en tranquillement.'] };

// One scripted transcript per flush, whichever session flushes: the queue never runs dry.
let next = 0;
const refill = () => {
  while (voxtral.utterances.length < 1000) voxtral.utterances.push({ text: transcripts[next++ % transcripts.length]! });
};
refill();
setInterval(refill, 200);
const scripts = new Map<string, ScriptedUtterance[]>();
voxtral.queueFor = (socket) => {
  const name = (socket.updates[0]?.context_bias as string[] | undefined)?.[0];
  return (name && scripts.get(name)) || voxtral.utterances;
};
process.send!({ type: 'ready', baseUrl: mistral.baseUrl });
// Their CPU (µs, all threads) on request: the bench reports the fakes' share of the two cores.
process.on('message', (msg: { type: string; lane?: string; utterance?: ScriptedUtterance }) => {
  if (msg.type === 'cpu') process.send!({ type: 'cpu', ...process.cpuUsage() });
  if (msg.type === 'script') {
    const queue = scripts.get(msg.lane!) ?? [];
    // Bounded: a session whose phrases are never flushed (detectors gone) keeps its last few only.
    queue.push(msg.utterance!);
    if (queue.length > 8) queue.shift();
    scripts.set(msg.lane!, queue);
  }
});
process.on('SIGTERM', () => process.exit(0));
