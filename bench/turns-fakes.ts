import { AudioClock } from '../test/support/audio-clock.ts';
import { exitOnContractViolation } from '../test/support/contract-violations.ts';
import { FakeMistral } from '../test/support/fake-mistral.ts';
import { FakeVoxtral, type ScriptedUtterance, type TranscriptionSocketRecord } from '../test/support/fake-voxtral.ts';

/**
 * The speech services and the model of bench:turns in their own process, at realistic speed: the model
 * 300 ms to its first token, the voice 100 ms to its first audio, the recognizer's final transcript
 * STT ms after a flush and its interim words Voxtral's 480 ms behind the audio (the tests' fakes).
 * Each lane (senior) has its own script, chosen by the socket's context bias (the senior's name). The
 * recognizer hears where its words are: each script's times are ms into the utterance's own audio, and
 * the audio the runtime sends is found in it (AudioClock).
 *   argv: sttMs modelMs voiceMs
 *   messages (advanced serialization): {type: 'script', lane, utterance, audio} → 'scripted'; {type: 'counts'} → agent calls and speech requests so far
 */
export const REPLY = 'Je vous écoute.';
exitOnContractViolation();
const [sttMs, modelMs, voiceMs] = process.argv.slice(2).map(Number);
const voxtral = new FakeVoxtral();
voxtral.transcriptionLatencyMs = sttMs!;
voxtral.speechLatencyMs = voiceMs!;
const mistral = await new FakeMistral(voxtral).start();
mistral.chatFirstByteMs = modelMs!;
// One short sentence: one speech request per reply.
mistral.mode = { kind: 'stream', chunks: [REPLY] };
const scripts = new Map<string, ScriptedUtterance[]>();
const clocks = new Map<string, AudioClock>();
const unscripted: ScriptedUtterance[] = [];
let unscriptedSockets = 0;
const named = new WeakSet<TranscriptionSocketRecord>();
const laneOf = (socket: TranscriptionSocketRecord) => (socket.updates[0]?.context_bias as string[] | undefined)?.[0];
voxtral.clock = (socket, pcm) => {
  const name = laneOf(socket);
  return name === undefined ? undefined : clocks.get(name)?.heard(pcm);
};
voxtral.queueFor = (socket) => {
  const name = laneOf(socket);
  if (!name) {
    if (!named.has(socket)) unscriptedSockets += 1;
    named.add(socket);
    return unscripted;
  }
  let queue = scripts.get(name);
  if (!queue) scripts.set(name, (queue = []));
  return queue;
};
process.send!({ type: 'ready', baseUrl: mistral.baseUrl });
process.on('message', (msg: { type: string; lane?: string; utterance?: ScriptedUtterance; audio?: Int16Array }) => {
  if (msg.type === 'script') {
    scripts.set(msg.lane!, [msg.utterance!]);
    let clock = clocks.get(msg.lane!);
    if (!clock) clocks.set(msg.lane!, (clock = new AudioClock(16_000)));
    clock.set(msg.audio!);
    return process.send!({ type: 'scripted' });
  }
  if (msg.type === 'counts') {
    // The agent streams; the sub-agents (mood, summaries) do not.
    const agentCalls = mistral.chatRequests.filter((r) => r.body.stream === true).length;
    const speechRequests = voxtral.speechRequests.filter((r) => r.body.input === REPLY).length;
    return process.send!({ type: 'counts', agentCalls, speechRequests, unscriptedSockets });
  }
});
process.on('SIGTERM', () => process.exit(0));
