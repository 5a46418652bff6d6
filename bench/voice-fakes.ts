import { FakeMistral } from '../test/support/fake-mistral.ts';
import { FakeVoxtral } from '../test/support/fake-voxtral.ts';

/**
 * The speech services of bench:voice in their own process, so that their work and timers neither
 * load the runtime nor skew the generator: the loopback fakes of the tests with fixed latencies.
 *   argv: sttLatencyMs ttsLatencyMs transcript…
 */
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
process.send!({ type: 'ready', baseUrl: mistral.baseUrl });
// Their CPU (µs, all threads) on request: the bench reports the fakes' share of the two cores.
process.on('message', (msg: { type: string }) => {
  if (msg.type === 'cpu') process.send!({ type: 'cpu', ...process.cpuUsage() });
});
process.on('SIGTERM', () => process.exit(0));
