import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { promptVersion } from '../../machines/session/prompt.ts';
import { FakeMistral } from '../support/fake-mistral.ts';
import { FakeVoxtral, type SpeechSpan } from '../support/fake-voxtral.ts';
import { KIOSK_TOKEN, startTestRuntime, type TestRuntime } from '../support/runtime.ts';
import { speechScript, type ScriptPart } from '../support/speech.ts';
import { VoiceKiosk } from '../support/voice-kiosk.ts';
import { PRE_ROLL_MS } from '../../machines/voice/voice.port.ts';
import { ADOPTION_WINDOW_MS } from '../../runtime/voice/preemption/preemptive-turn.ts';

/**
 * The preemptive turn, through a real kiosk socket: real speech (espeak-ng) in real time, the Voxtral
 * fake streaming its words behind the audio, the real Mistral adapter against a fake answering 300 ms
 * to its first token. While the end-of-turn wait runs, the turn's work starts on the interim
 * transcript; the turn adopts it when it ends on that text, and nothing of it remains otherwise.
 */

let voxtral: FakeVoxtral;
let mistral: FakeMistral;
let rt: TestRuntime;
/** A realistic model: the first token 300 ms after the request. */
const MODEL_FIRST_TOKEN_MS = 300;
/** A no-cue pause waits this long here, so a speculation starts (at 1500 − lead) inside a 1.2 s pause that does not end the turn. */
const NO_CUE_MS = 1500;
const REPLY = 'Oui, je viens demain matin avec plaisir.';

beforeAll(async () => {
  voxtral = new FakeVoxtral();
  mistral = await new FakeMistral(voxtral).start();
  mistral.chatFirstByteMs = MODEL_FIRST_TOKEN_MS;
  // The speculation on the interim transcript, before any flush: the early flush (its own tests in
  // voice-early-flush.test.ts) would hand the decision the final text instead.
  // These files speak the same few sentences again and again to test the voice path to the model: the strict
  // semantic cache (on by default) would answer the repeats from RAM. test/e2e/semantic-cache.test.ts tests it.
  rt = await startTestRuntime({}, { MISTRAL_API_KEY: 'test-key', MISTRAL_BASE_URL: mistral.baseUrl, ENDPOINT_SILENCE_MS: String(NO_CUE_MS), STT_EARLY_FLUSH_MS: '0', SEMANTIC_CACHE_PROFILE: 'off' });
}, 60_000);

beforeEach(() => {
  voxtral.utterances.length = 0;
  voxtral.transcriptionLatencyMs = 0;
  mistral.mode = { kind: 'stream', chunks: [REPLY] };
  mistral.onChatRequest = null;
});

afterAll(async () => {
  await rt?.close();
  await mistral?.stop();
  await voxtral?.stop();
});

/**
 * Scripts the recognizer with each phrase's true place in the audio, then speaks `parts` on a new voice
 * kiosk (handed to `opened` before it speaks).
 */
async function say(runtime: TestRuntime, parts: ScriptPart[], options: { opened?: (kiosk: VoiceKiosk) => void } = {}): Promise<VoiceKiosk> {
  const script = await speechScript(parts);
  const phrases = parts.filter((p): p is string => typeof p === 'string');
  const offset = script.speech[0]!.startMs - PRE_ROLL_MS;
  const speech: SpeechSpan[] = script.speech.map((s, i) => ({ startMs: s.startMs - offset, endMs: s.endMs - offset, text: phrases[i]! }));
  voxtral.utterances.push({ text: phrases.join(' '), speech });
  const kiosk = await VoiceKiosk.connect(runtime.wsUrl, KIOSK_TOKEN);
  expect(await kiosk.start(true, 24_000)).toMatchObject({ audio: { voiceInput: true } });
  options.opened?.(kiosk);
  // The microphone goes quiet once the turn is answered: the rest of the silence would only be waited for.
  const from = kiosk.frames.length;
  await kiosk.speak(script.pcm, 1, () => kiosk.frames.slice(from).some((f) => f.type === 'reply.done'));
  return kiosk;
}

/** The counters of one metric, by label value. */
async function counts(runtime: TestRuntime, name: string): Promise<Record<string, number>> {
  const metric = await runtime.metrics.registry.getSingleMetric(name)!.get();
  return Object.fromEntries(metric.values.map((v) => [String(Object.values(v.labels)[0]), v.value]));
}

function session(runtime: TestRuntime) {
  return runtime.registry.list()[0]!.actor.getSnapshot().context;
}

describe('the preemptive turn', () => {
  it('a finished sentence: the turn adopts the work started during the end-of-turn wait — one model call, one speech request', async () => {
    const before = { chats: mistral.agentRequests.length, speech: voxtral.speechRequests.length, ended: await counts(rt, 'kohami_preemptive_turns_total'), wasted: await counts(rt, 'kohami_preemptive_wasted_total') };
    // The final transcript comes 1 s after the end of turn: time for the speculation to reach the model and the voice.
    voxtral.transcriptionLatencyMs = 1000;
    const kiosk = await say(rt, [{ silenceMs: 400 }, 'Je voudrais une tasse de thé bien chaud.', { silenceMs: 2500 }]);
    const final = await kiosk.next('transcript.final', 0);
    expect(final.text).toBe('Je voudrais une tasse de thé bien chaud.');
    const done = await kiosk.next((f) => f.type === 'reply.done' && f.turnId === final.turnId, 0);
    expect(done).toMatchObject({ text: REPLY, flux: 'agent' });
    await kiosk.next((f) => f.type === 'reply.audio.end' && f.turnId === final.turnId, 0);
    // One model call: the speculative one, adopted by the turn (committed, nothing wasted).
    expect(mistral.agentRequests.length - before.chats).toBe(1);
    // The reply is one sentence: one speech request, the speculative one's (a second would mean the turn asked again).
    expect(voxtral.speechRequests.slice(before.speech).filter((r) => r.body.input === REPLY)).toHaveLength(1);
    // Committed once every piece of work is adopted, or at the adoption window's end when one was not
    // asked for (a loaded machine's recall over its budget): never wasting the model's or the voice's.
    // (Both ends counted: a failure shows whether the speculations were dropped instead.)
    const ended = async () => {
      const now = await counts(rt, 'kohami_preemptive_turns_total');
      return { committed: (now.committed ?? 0) - (before.ended.committed ?? 0), aborted: (now.aborted ?? 0) - (before.ended.aborted ?? 0) };
    };
    await expect.poll(ended, { timeout: ADOPTION_WINDOW_MS + 5_000 }).toMatchObject({ committed: 1 });
    expect(await counts(rt, 'kohami_preemptive_wasted_total')).toEqual(before.wasted);
    // The window holds the turn once, as the real turn recorded it.
    expect(session(rt).window.slice(-2)).toEqual([
      { role: 'user', content: 'Je voudrais une tasse de thé bien chaud.' },
      { role: 'assistant', content: REPLY },
    ]);
    kiosk.close();
  }, 30_000 + ADOPTION_WINDOW_MS);

  it('the senior goes on after a pause: the speculation is aborted, counted as wasted, and leaves no trace — no window entry, no turn, no cache entry', async () => {
    const before = { chats: mistral.agentRequests.length, aborted: mistral.chatAborted, ended: await counts(rt, 'kohami_preemptive_turns_total'), wasted: await counts(rt, 'kohami_preemptive_wasted_total') };
    // The first model call (the pause's speculation) is never answered: only its abort ends it.
    let calls = 0;
    mistral.onChatRequest = (body) => {
      if (body.stream === true) mistral.mode = (calls += 1) === 1 ? { kind: 'hang' } : { kind: 'stream', chunks: [REPLY] };
    };
    const kiosk = await say(rt, [{ silenceMs: 400 }, 'Je suis allée voir ma cousine Jeanne', { silenceMs: 1200 }, 'à la gare de Lyon hier.', { silenceMs: 2500 }]);
    const final = await kiosk.next('transcript.final', 0);
    expect(final.text).toBe('Je suis allée voir ma cousine Jeanne à la gare de Lyon hier.');
    await kiosk.next((f) => f.type === 'reply.done' && f.turnId === final.turnId, 0);
    expect(kiosk.ofType('transcript.final')).toHaveLength(1);
    const ended = await counts(rt, 'kohami_preemptive_turns_total');
    // The pause's speculation was dropped when she went on; the one at the end became the turn.
    expect((ended.aborted ?? 0) - (before.ended.aborted ?? 0)).toBeGreaterThanOrEqual(1);
    expect((ended.committed ?? 0) - (before.ended.committed ?? 0)).toBe(1);
    // The dropped speculation's model call was cut …
    expect(mistral.agentRequests.length - before.chats).toBeGreaterThanOrEqual(2);
    await expect.poll(() => mistral.chatAborted - before.aborted).toBeGreaterThanOrEqual(1);
    // … and counted as the model's work wasted (a final that differs from the interim ends a speculation
    // the same way: the turn-taking machine's unit tests decide it, test/unit/turn-taking.machine.test.ts).
    expect(((await counts(rt, 'kohami_preemptive_wasted_total')).model ?? 0) - (before.wasted.model ?? 0)).toBeGreaterThanOrEqual(1);
    // … and it left nothing: the turns and the window know one question, the whole sentence.
    const context = session(rt);
    expect(context.turns.filter((t) => t.turnId === final.turnId)).toHaveLength(1);
    expect(context.window.filter((m) => m.role === 'user' && m.content.startsWith('Je suis allée voir'))).toEqual([{ role: 'user', content: final.text }]);
    expect(context.turns.some((t) => t.transcript === 'Je suis allée voir ma cousine Jeanne')).toBe(false);
    // The semantic cache holds no reply for the speculation's question.
    const lookup = await rt.semanticCache.lookup({ seniorId: context.seniorId, question: 'Je suis allée voir ma cousine Jeanne', previous: null, promptVersion: promptVersion(context.profile.persona) }, new AbortController().signal);
    expect(lookup.kind).not.toBe('hit');
    kiosk.close();
  }, 30_000);

  it('PREEMPTIVE_TURN=off: the model is asked only once the final transcript is in', async () => {
    const off = await startTestRuntime({}, { MISTRAL_API_KEY: 'test-key', MISTRAL_BASE_URL: mistral.baseUrl, PREEMPTIVE_TURN: 'off' });
    try {
      const finalsAtRequest: number[] = [];
      const kiosk = await say(off, [{ silenceMs: 400 }, 'Je voudrais une tasse de thé bien chaud.', { silenceMs: 2500 }], {
        opened: (k) => (mistral.onChatRequest = (body) => body.stream === true && finalsAtRequest.push(k.ofType('transcript.final').length)),
      });
      const final = await kiosk.next('transcript.final', 0);
      await kiosk.next((f) => f.type === 'reply.done' && f.turnId === final.turnId, 0);
      expect(finalsAtRequest).toEqual([1]);
      expect(await counts(off, 'kohami_preemptive_turns_total')).toEqual({});
      kiosk.close();
    } finally {
      await off.close();
    }
  }, 60_000);
});
