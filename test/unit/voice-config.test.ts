import { describe, expect, it } from 'vitest';
import { loadConfig } from '../../runtime/config.ts';

describe('voice configuration', () => {
  it('has the documented defaults', () => {
    expect(loadConfig({})).toMatchObject({
      ENDPOINT_MIN_MS: 400,
      ENDPOINT_SILENCE_MS: 2200,
      STT_EARLY_FLUSH_MS: 150,
      STT_RECHECK_MS: 400,
      ENDPOINT_UNFINISHED_MS: 2500,
      ENDPOINT_MAX_MS: 3000,
      MIN_SPEECH_MS: 250,
      MAX_UTTERANCE_MS: 30_000,
      STT_BUDGET_MS: 2000,
      BARGE_IN_MIN_MS: 400,
      MISTRAL_STT_MODEL: 'voxtral-mini-transcribe-realtime-2602',
      MISTRAL_TTS_MODEL: 'voxtral-mini-tts-2603',
      MISTRAL_TTS_VOICE: 'fr_marie_neutral',
    });
  });

  it.each([
    ['ENDPOINT_SILENCE_MS', '200'],
    ['ENDPOINT_SILENCE_MS', '3500'],
    ['STT_BUDGET_MS', '0'],
    ['BARGE_IN_MIN_MS', 'soon'],
    ['MAX_UTTERANCE_MS', '500'],
  ])('%s=%s is refused with a line naming it', (name, value) => {
    expect(() => loadConfig({ [name]: value })).toThrow(new RegExp(`invalid configuration: ${name}`));
  });

  it('refuses MIN_SPEECH_MS not below MAX_UTTERANCE_MS at start, rather than each voice session losing its listener', () => {
    expect(() => loadConfig({ MIN_SPEECH_MS: '2000', MAX_UTTERANCE_MS: '2000' })).toThrow(/invalid configuration: MIN_SPEECH_MS.*must be below MAX_UTTERANCE_MS \(2000\)/);
    expect(loadConfig({ MIN_SPEECH_MS: '1999', MAX_UTTERANCE_MS: '2000' }).MIN_SPEECH_MS).toBe(1999);
  });

  it('refuses an early flush that would come after the shortest end of turn; 0 turns it off', () => {
    expect(() => loadConfig({ STT_EARLY_FLUSH_MS: '400' })).toThrow(/invalid configuration: STT_EARLY_FLUSH_MS \(got "400"\): must be below ENDPOINT_MIN_MS \(400\), or 0 for off/);
    expect(() => loadConfig({ STT_EARLY_FLUSH_MS: 'soon' })).toThrow(/invalid configuration: STT_EARLY_FLUSH_MS/);
    expect(loadConfig({ STT_EARLY_FLUSH_MS: '0' }).STT_EARLY_FLUSH_MS).toBe(0);
    expect(loadConfig({ STT_EARLY_FLUSH_MS: '399' }).STT_EARLY_FLUSH_MS).toBe(399);
  });

  it('takes any recheck from 0 (off) to 3 s, whatever the other waits: one that comes first waits for the first flush’s answer, one past the end of turn never comes', () => {
    expect(() => loadConfig({ STT_RECHECK_MS: '3001' })).toThrow(/invalid configuration: STT_RECHECK_MS \(got "3001"\)/);
    expect(() => loadConfig({ STT_RECHECK_MS: 'later' })).toThrow(/invalid configuration: STT_RECHECK_MS/);
    expect(loadConfig({ STT_RECHECK_MS: '0' }).STT_RECHECK_MS).toBe(0);
    expect(loadConfig({ STT_RECHECK_MS: '100' }).STT_RECHECK_MS).toBe(100);
    expect(loadConfig({ ENDPOINT_MIN_MS: '200', ENDPOINT_SILENCE_MS: '300', ENDPOINT_UNFINISHED_MS: '400', ENDPOINT_MAX_MS: '400', STT_EARLY_FLUSH_MS: '100' }).STT_RECHECK_MS).toBe(400);
  });

  it('sends the recognizer its documented settings alone unless told: no language, no names; a flush answer bound within the budget', () => {
    expect(loadConfig({})).toMatchObject({ STT_CONTEXT_BIAS: 'off', STT_FLUSH_ANSWER_MS: 600, STT_IDLE_CLOSE_MS: 20_000 });
    expect(loadConfig({}).STT_LANGUAGE).toBeUndefined();
    expect(loadConfig({ STT_LANGUAGE: 'fr', STT_CONTEXT_BIAS: 'on' })).toMatchObject({ STT_LANGUAGE: 'fr', STT_CONTEXT_BIAS: 'on' });
    expect(() => loadConfig({ STT_LANGUAGE: 'French' })).toThrow(/invalid configuration: STT_LANGUAGE \(got "French"\): must be a language code such as fr/);
    expect(() => loadConfig({ STT_CONTEXT_BIAS: 'yes' })).toThrow(/invalid configuration: STT_CONTEXT_BIAS/);
    // Every stage of an unanswered flush (its end, then its replay) starts within STT_BUDGET_MS.
    expect(() => loadConfig({ STT_FLUSH_ANSWER_MS: '1000' })).toThrow(/invalid configuration: STT_FLUSH_ANSWER_MS \(got "1000"\): must be below half of STT_BUDGET_MS \(2000\)/);
    expect(loadConfig({ STT_FLUSH_ANSWER_MS: '999' }).STT_FLUSH_ANSWER_MS).toBe(999);
    expect(loadConfig({ STT_BUDGET_MS: '900' }).STT_FLUSH_ANSWER_MS).toBe(300);
    expect(() => loadConfig({ STT_IDLE_CLOSE_MS: '500' })).toThrow(/invalid configuration: STT_IDLE_CLOSE_MS/);
  });

  it('refuses end-of-turn waits out of order (min < silence < unfinished ≤ max), naming the variable', () => {
    expect(() => loadConfig({ ENDPOINT_MIN_MS: '2200' })).toThrow(/invalid configuration: ENDPOINT_MIN_MS \(got "2200"\): must be below ENDPOINT_SILENCE_MS \(2200\)/);
    expect(() => loadConfig({ ENDPOINT_SILENCE_MS: '2500' })).toThrow(/invalid configuration: ENDPOINT_UNFINISHED_MS: must be above ENDPOINT_SILENCE_MS \(2500\)/);
    expect(() => loadConfig({ ENDPOINT_UNFINISHED_MS: '3500' })).toThrow(/invalid configuration: ENDPOINT_MAX_MS: must be at least ENDPOINT_UNFINISHED_MS \(3500\)/);
    expect(loadConfig({ ENDPOINT_UNFINISHED_MS: '3000' }).ENDPOINT_UNFINISHED_MS).toBe(3000);
    expect(loadConfig({ ENDPOINT_MIN_MS: '200', ENDPOINT_SILENCE_MS: '300', ENDPOINT_UNFINISHED_MS: '400', ENDPOINT_MAX_MS: '400' })).toMatchObject({ ENDPOINT_MIN_MS: 200, ENDPOINT_MAX_MS: 400 });
  });
});
