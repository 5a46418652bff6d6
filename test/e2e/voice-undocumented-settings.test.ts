import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { expectContractViolations } from '../support/contract-violations.ts';
import type { FakeMistral } from '../support/fake-mistral.ts';
import { isUndocumentedSetting, type FakeVoxtral } from '../support/fake-voxtral.ts';
import { adminApi, KIOSK_TOKEN, type TestRuntime } from '../support/runtime.ts';
import { concat, frenchSpeech, silence } from '../support/speech.ts';
import { VoiceKiosk } from '../support/voice-kiosk.ts';
import { startVoiceRuntime } from '../support/voice-runtime.ts';

/**
 * STT_LANGUAGE and STT_CONTEXT_BIAS, the recognizer's settings its API does not document, turned on:
 * sent while the service takes them (the senior's name, and her contacts' names only under the
 * `contacts` consent); refused, every set-up falls back to the documented fields — once for the process,
 * said in the log and counted — and the senior is heard all the same.
 */

let voxtral: FakeVoxtral;
let rt: TestRuntime;
let stop: () => Promise<void>;
let utterance: Int16Array;
const TEXT = 'Je suis allée au marché ce matin avec ma fille';

beforeAll(async () => {
  let mistral: FakeMistral;
  ({ rt, voxtral, mistral, stop } = await startVoiceRuntime('undocumented-settings', { STT_LANGUAGE: 'fr', STT_CONTEXT_BIAS: 'on' }));
  mistral.mode = { kind: 'stream', chunks: ['Bien.'] };
  // Short: the fake is scripted with TEXT; the audio need only be speech, then an end of turn.
  utterance = concat([silence(200), await frenchSpeech('Oui, bonjour.'), silence(700)]);
}, 60_000);

afterAll(() => stop?.());

/** One utterance on a new voice session: its reply, and the `session.update`s its sockets were sent. */
async function utter(): Promise<{ flux: unknown; text: unknown; updates: Array<Record<string, unknown>> }> {
  voxtral.utterances.push({ text: TEXT });
  const first = voxtral.sockets.length;
  const k = await VoiceKiosk.connect(rt.wsUrl, KIOSK_TOKEN);
  expect(await k.start()).toMatchObject({ audio: { voiceInput: true } });
  await k.speak(utterance);
  const done = await k.next('reply.done', 0);
  const final = k.ofType('transcript.final')[0];
  k.close();
  return { flux: done.flux, text: final?.text, updates: voxtral.sockets.slice(first).flatMap((s) => s.updates) };
}

const fallbacks = async () => Number((await rt.metrics.registry.getSingleMetricAsString('kohami_stt_workarounds_total')).match(/event="setup_fallback"} (\d+)/)?.[1] ?? 0);

describe('a service that takes them', () => {
  it('is sent the language and the senior’s name, and her contacts’ names only under the contacts consent', async () => {
    expectContractViolations(isUndocumentedSetting);
    voxtral.behaviours.add('accepts-undocumented-fields');
    const seniorId = rt.seed!.seniorId;
    const api = adminApi(rt);
    await rt.memory.memory.persist({ seniorId, content: 'Sa fille Claire vient le dimanche.', category: 'contacts' });
    const consented = await utter();
    expect(consented.text).toBe(TEXT);
    expect(consented.flux).not.toBe('sos');
    expect(consented.updates.map((u) => u.language)).toEqual(['fr']);
    expect(consented.updates.flatMap((u) => u.context_bias as string[])).toEqual(expect.arrayContaining(['Marie', 'Claire']));
    expect((await api('DELETE', `/v1/admin/seniors/${seniorId}/consents/contacts`)).status).toBe(200);
    const names = (await utter()).updates.flatMap((u) => u.context_bias as string[]);
    expect(names).toContain('Marie');
    expect(names).not.toContain('Claire');
    expect((await api('PUT', `/v1/admin/seniors/${seniorId}/consents/contacts`)).status).toBe(200);
    expect(await fallbacks()).toBe(0);
    voxtral.behaviours.delete('accepts-undocumented-fields');
  }, 60_000);
});

describe('a service that refuses them (the conforming one)', () => {
  it('falls back to the documented fields once for the process, warns and counts it; every senior is heard', async () => {
    expectContractViolations(isUndocumentedSetting);
    const refused = await utter();
    // The refused set-up, then the documented one: the turn is answered, not the SOS line.
    expect(refused.text).toBe(TEXT);
    expect(refused.flux).not.toBe('sos');
    expect(refused.updates.map((u) => Object.keys(u).sort())).toEqual([['audio_format', 'context_bias', 'language'], ['audio_format']]);
    // The next session: the documented fields at once.
    const next = await utter();
    expect(next.text).toBe(TEXT);
    expect(next.flux).not.toBe('sos');
    expect(next.updates.map((u) => Object.keys(u))).toEqual([['audio_format']]);
    expect(await fallbacks()).toBe(1);
    const warnings = rt.logs.lines.map((l) => JSON.parse(l) as { level: number; msg: string; fields?: string[] }).filter((l) => l.msg.includes('undocumented settings'));
    expect(warnings).toEqual([expect.objectContaining({ level: 40, fields: ['language', 'context_bias'] })]);
    // Her contacts' names go to the service only, never to the log.
    expect(rt.logs.text).not.toContain('Claire');
  }, 60_000);
});
