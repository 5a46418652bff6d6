import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { loadConfig } from '../../runtime/config.ts';
import { CHECKIN_LINE } from '../../runtime/voice/idle-checkin.ts';
import { FakeMistral } from '../support/fake-mistral.ts';
import { FakeVoxtral } from '../support/fake-voxtral.ts';
import type { Frame } from '../support/kiosk-client.ts';
import { KIOSK_TOKEN, startTestRuntime, type TestRuntime } from '../support/runtime.ts';
import { concat, frenchSpeech, silence } from '../support/speech.ts';
import { VoiceKiosk } from '../support/voice-kiosk.ts';
import { QUICK_ENDPOINT } from '../support/endpointing.ts';

/**
 * Issue 21, item 5: after a reply has played, a senior silent for IDLE_CHECKIN_MS hears one gentle
 * pre-synthesized line, once per silence, never over their speech, and never as a turn. The real
 * runtime over a real socket; the silence is the kiosk's microphone streaming silence.
 */

const OUTPUT_RATE = 24_000;
const ENV = { MISTRAL_API_KEY: 'test-key', ...QUICK_ENDPOINT, STT_BUDGET_MS: '1500', IDLE_CHECKIN_MS: '1500' };
const IDLE_MS = loadConfig(ENV).IDLE_CHECKIN_MS;
const ASKED = 'Je suis allée au marché ce matin avec ma fille';

let voxtral: FakeVoxtral;
let mistral: FakeMistral;
let rt: TestRuntime;
/** « Je suis allée au marché ce matin avec ma fille. », about 2.5 s, after 200 ms and before a second of silence. */
let utterance: Int16Array;

beforeAll(async () => {
  voxtral = new FakeVoxtral();
  mistral = await new FakeMistral(voxtral).start();
  rt = await startTestRuntime({}, { ...ENV, MISTRAL_BASE_URL: mistral.baseUrl });
  utterance = concat([silence(200), await frenchSpeech('Je suis allée au marché ce matin avec ma fille.'), silence(1000)]);
}, 60_000);

afterAll(async () => {
  await rt?.close();
  await mistral?.stop();
  await voxtral?.stop();
});

describe('the idle check-in (IDLE_CHECKIN_MS on)', () => {
  it('one line after a silence, not over speech, not twice in a silence, again after the senior has spoken; never a turn', async () => {
    mistral.mode = { kind: 'stream', chunks: ['Bien sûr.'] };
    const k = await VoiceKiosk.connect(rt.wsUrl, KIOSK_TOKEN);
    expect(await k.start(true, OUTPUT_RATE)).toMatchObject({ audio: { voiceInput: true } });
    const isCheckin = (f: Frame) => f.type === 'reply.done' && f.flux === 'checkin';
    /** Waits for the turn's audio to end and says it played; returns when that was said. */
    const played = async (turnId: string) => {
      await k.next((f) => f.type === 'reply.audio.end' && f.turnId === turnId, 0);
      k.send({ type: 'playback.done', turnId });
      return performance.now();
    };

    // A reply plays to its end; the senior starts speaking at once, and goes on longer than IDLE_CHECKIN_MS: no line over it.
    k.send({ type: 'turn', turnId: 't1', transcript: 'Bonjour' });
    await k.next((f) => f.type === 'reply.done' && f.turnId === 't1', 0);
    await played('t1');
    voxtral.utterances.push({ text: ASKED });
    await k.speak(utterance);
    const v1 = await k.next('transcript.final', 0);
    expect(k.frames.filter(isCheckin)).toEqual([]);

    // Its reply played, the senior says nothing: after IDLE_CHECKIN_MS, the line, under a voice turnId of its own.
    const quietFrom = await played(v1.turnId as string);
    const checkin = await k.next(isCheckin, IDLE_MS + 10_000);
    expect(performance.now() - quietFrom).toBeGreaterThanOrEqual(IDLE_MS);
    expect(checkin).toEqual({ type: 'reply.done', turnId: 'v2', text: CHECKIN_LINE, flux: 'checkin', latencyMs: 0 });
    // Spoken like the SOS line: its audio, from the pre-synthesized lines (asked of the speech service once, at warm-up).
    await k.next((f) => f.type === 'reply.audio.start' && f.turnId === 'v2', 0);
    expect(k.audio.filter((a) => a.turnId === 'v2').length).toBeGreaterThan(0);
    const checkinPlayed = await played('v2');
    expect(voxtral.speechRequests.filter((r) => r.body.input === CHECKIN_LINE)).toHaveLength(1);

    // The senior is still silent, three times IDLE_CHECKIN_MS: no second line in the same silence.
    await k.speak(silence(3 * IDLE_MS), 1.3);
    expect(performance.now() - checkinPlayed).toBeGreaterThan(2 * IDLE_MS);
    expect(k.frames.filter(isCheckin)).toHaveLength(1);

    // The senior speaks again: after the next reply's silence, one more line.
    voxtral.utterances.push({ text: ASKED });
    await k.speak(utterance);
    const v3 = await k.next((f) => f.type === 'transcript.final' && f.turnId !== 'v1', 0);
    expect(v3.turnId).toBe('v3');
    await played('v3');
    const again = await k.next((f) => isCheckin(f) && f.turnId !== 'v2', IDLE_MS + 10_000);
    expect(again).toMatchObject({ turnId: 'v4', text: CHECKIN_LINE });
    await played('v4');

    // Never a turn: the conversation holds the senior's three turns and their replies only.
    const { window, turns } = rt.registry.list()[0]!.actor.getSnapshot().context;
    expect(turns.map((t) => t.turnId)).toEqual(['t1', 'v1', 'v3']);
    expect(window.some((m) => m.content.includes(CHECKIN_LINE))).toBe(false);
    expect(k.ofType('reply.audio.clear')).toEqual([]);
    k.close();
  }, 60_000);
});
