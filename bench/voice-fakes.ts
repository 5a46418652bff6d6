import { AudioClock } from '../test/support/audio-clock.ts';
import { exitOnContractViolation } from '../test/support/contract-violations.ts';
import { FakeMistral } from '../test/support/fake-mistral.ts';
import { FakeVoxtral, type ScriptedUtterance, type TranscriptionSocketRecord } from '../test/support/fake-voxtral.ts';

/**
 * The speech services of bench:voice in their own process, so that their work and timers neither
 * load the runtime nor skew the generator: the loopback fakes of the tests with fixed latencies.
 * Every kiosk streams the same loop of phrases from its own offset; the recognizer hears what a socket
 * says by finding its audio in the loop (message `loop`: its audio and where each phrase lies), so its
 * interim words are the phrase's own, placed where they are said, and a speculative turn on them can be
 * the turn. A socket whose audio is found nowhere is answered from the shared queue.
 *   argv: sttLatencyMs ttsLatencyMs transcript…   (advanced serialization)
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

interface Loop {
  pcm: Int16Array;
  phrases: Array<{ startMs: number; endMs: number }>;
}
let loop: Loop | null = null;
/** Per socket: where its audio lies in the loop, the phrase it is saying, and that phrase's script (times in the loop's ms). */
const heard = new WeakMap<TranscriptionSocketRecord, { clock: AudioClock; phrase: number; queue: ScriptedUtterance[] }>();

voxtral.clock = (socket, pcm) => {
  if (!loop) return undefined;
  let state = heard.get(socket);
  if (!state) {
    const clock = new AudioClock(16_000);
    clock.set(loop.pcm);
    heard.set(socket, (state = { clock, phrase: -1, queue: [] }));
  }
  const atMs = state.clock.heard(pcm);
  if (atMs === undefined) return undefined;
  const phrase = loop.phrases.findIndex((p) => p.startMs <= atMs && atMs <= p.endMs);
  if (phrase >= 0 && phrase !== state.phrase) {
    // A new phrase: its script replaces what was left of the last one.
    state.phrase = phrase;
    state.queue.splice(0, state.queue.length, { text: transcripts[phrase]!, speech: [loop.phrases[phrase]!] });
  }
  return atMs;
};
voxtral.queueFor = (socket) => heard.get(socket)?.queue ?? voxtral.utterances;

process.send!({ type: 'ready', baseUrl: mistral.baseUrl });
// Their CPU (µs, all threads) on request: the bench reports the fakes' share of the two cores.
process.on('message', (msg: { type: string } & Partial<Loop>) => {
  if (msg.type === 'cpu') process.send!({ type: 'cpu', ...process.cpuUsage() });
  if (msg.type === 'loop') loop = { pcm: msg.pcm!, phrases: msg.phrases! };
});
process.on('SIGTERM', () => process.exit(0));
