import { describe, expect, it } from 'vitest';
import {
  advanceEndpointing,
  isSpeechWindow,
  QUIET,
  validateEndpointingConfig,
  type EndpointingEvent,
  type EndpointingState,
} from '../../machines/voice/endpointing.ts';

const config = { minSpeechMs: 250, endpointSilenceMs: 700, maxUtteranceMs: 30_000 };
const WINDOW = 32;

/** Runs scripted decisions: 'S' speech, '.' silence, one window each; returns events with the window index. */
function run(script: string, cfg = config): { events: Array<[number, EndpointingEvent]>; state: EndpointingState } {
  let state = QUIET;
  const events: Array<[number, EndpointingEvent]> = [];
  [...script.replace(/\s/g, '')].forEach((c, i) => {
    const step = advanceEndpointing(state, c === 'S', WINDOW, cfg);
    state = step.state;
    if (step.event) events.push([i, step.event]);
  });
  return { events, state };
}

const repeat = (c: string, ms: number): string => c.repeat(Math.ceil(ms / WINDOW));

describe('endpointing', () => {
  it('starts speech once minSpeechMs of continuous speech is heard, reporting the onset', () => {
    const { events } = run(`${repeat('.', 500)}${repeat('S', 1000)}`);
    expect(events[0]).toEqual([16 + 7, { type: 'started', onsetMs: 256 }]); // 16 quiet windows, then the 8th of speech
  });

  it('ignores bursts shorter than minSpeechMs (a cough, a chair)', () => {
    const { events, state } = run(`SSSSSSS. SSSSSSS. ${repeat('.', 2000)} SSSS`);
    expect(events).toEqual([]);
    expect(state.phase).toBe('onset');
  });

  it('keeps the utterance open through a 500 ms mid-sentence pause and ends it after 700 ms of silence', () => {
    const { events } = run(`${repeat('S', 1000)}${repeat('.', 500)}${repeat('S', 1000)}${repeat('.', 1000)}`);
    expect(events.map(([, event]) => event.type)).toEqual(['started', 'stopped']);
    const speechEnd = 32 + 16 + 32; // windows of speech, pause, speech
    expect(events[1]).toEqual([speechEnd + 22 - 1, { type: 'stopped', reason: 'silence' }]); // 22 windows ≥ 700 ms
  });

  it('honours a longer ENDPOINT_SILENCE_MS for slower speakers', () => {
    const slow = { ...config, endpointSilenceMs: 1500 };
    expect(run(`${repeat('S', 500)}${repeat('.', 1200)}${repeat('S', 500)}${repeat('.', 1600)}`, slow).events.map(([, e]) => e.type)).toEqual(['started', 'stopped']);
    expect(run(`${repeat('S', 500)}${repeat('.', 1200)}${repeat('S', 500)}${repeat('.', 1600)}`).events.map(([, e]) => e.type)).toEqual([
      'started',
      'stopped',
      'started',
      'stopped',
    ]);
  });

  it('cuts an utterance at maxUtteranceMs and starts the next one if speech goes on', () => {
    const cfg = { ...config, maxUtteranceMs: 3200 };
    const { events } = run(repeat('S', 7000), cfg);
    expect(events.map(([i, e]) => [i, e.type === 'stopped' ? e.reason : e.type])).toEqual([
      [7, 'started'],
      [99, 'max_length'],
      [107, 'started'],
      [199, 'max_length'],
      [207, 'started'],
    ]);
  });

  it('counts confirmed speech, not the silences inside the utterance', () => {
    const { state } = run(`${repeat('S', 320)}${repeat('.', 320)}${repeat('S', 320)}`);
    expect(state).toMatchObject({ phase: 'speech', speechMs: 640, silenceMs: 0, utteranceMs: 960 });
  });

  it('reads probabilities with hysteresis: a soft trailing voice keeps speech going', () => {
    expect(isSpeechWindow(0.45, QUIET)).toBe(false);
    expect(isSpeechWindow(0.5, QUIET)).toBe(true);
    const speaking: EndpointingState = { phase: 'speech', speechMs: 500, silenceMs: 0, utteranceMs: 500 };
    expect(isSpeechWindow(0.4, speaking)).toBe(true);
    expect(isSpeechWindow(0.3, speaking)).toBe(false);
  });

  it('rejects nonsensical configuration', () => {
    expect(() => validateEndpointingConfig({ ...config, endpointSilenceMs: 0 })).toThrow(/endpointSilenceMs/);
    expect(() => validateEndpointingConfig({ ...config, minSpeechMs: Number.NaN })).toThrow(/minSpeechMs/);
    expect(() => validateEndpointingConfig({ ...config, maxUtteranceMs: 200 })).toThrow(/below maxUtteranceMs/);
  });
});
