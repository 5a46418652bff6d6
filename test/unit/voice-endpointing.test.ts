import { beforeAll, describe, expect, it } from 'vitest';
import { Listener } from '../../machines/voice/listener.ts';
import { SileroSpeechProbability } from '../../adapters/voice/silero-vad.ts';
import { WebRtcVoiceGate } from '../../adapters/voice/webrtc-vad.ts';
import {
  advanceEndpointing,
  AUDIBLE_END_CREDIT_MS,
  decideWindow,
  QUIET,
  SPEECH_START_THRESHOLD,
  validateEndpointingConfig,
  type EndpointingEvent,
  type EndpointingState,
  type WindowDecision,
} from '../../machines/voice/endpointing.ts';
import { chunks, noise, samplesToMs, speechScript, type ScriptedAudio } from '../support/speech.ts';

const config = { minSpeechMs: 250, endpointSilenceMs: 700, maxUtteranceMs: 30_000 };
const WINDOW = 32;

const DECISIONS: Record<string, WindowDecision> = { S: 'speech', w: 'weak', '.': 'silence' };

/** Runs scripted decisions: 'S' speech, 'w' weak (the hysteresis band), '.' silence, one window each; returns events with the window index. */
function run(script: string, cfg = config): { events: Array<[number, EndpointingEvent]>; state: EndpointingState } {
  let state = QUIET;
  const events: Array<[number, EndpointingEvent]> = [];
  [...script.replace(/\s/g, '')].forEach((c, i) => {
    const step = advanceEndpointing(state, DECISIONS[c]!, WINDOW, cfg);
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

  it('reads probabilities with hysteresis: the band continues an onset or an utterance, never starts one', () => {
    expect(decideWindow(0.45, QUIET)).toBe('silence');
    expect(decideWindow(0.5, QUIET)).toBe('speech');
    const speaking: EndpointingState = { phase: 'speech', speechMs: 500, silenceMs: 0, utteranceMs: 500 };
    expect(decideWindow(0.4, speaking)).toBe('weak');
    expect(decideWindow(0.3, speaking)).toBe('silence');
    expect(decideWindow(0.4, { phase: 'onset', speechMs: 64 })).toBe('weak');
    // Weak windows keep an onset going and count as speech heard.
    expect(run(`SSSS wwww SSSS`).events).toEqual([[7, { type: 'started', onsetMs: 256 }]]);
    expect(run(`${repeat('S', 320)} www`).state).toMatchObject({ phase: 'speech', speechMs: 320 + 96, silenceMs: 96 });
  });

  it('counts the silence from the last confident window: the detector’s decay through the band is part of the wait', () => {
    const { events } = run(`${repeat('S', 1000)} www ${repeat('.', 1000)}`);
    // The endpoint comes 22 windows (≥ 700 ms) after the last confident one, the three weak ones included.
    expect(events[1]).toEqual([32 + 22 - 1, { type: 'stopped', reason: 'silence' }]);
  });

  it('counts the wait from where the audio went quiet, when that came before the detector let go, by at most AUDIBLE_END_CREDIT_MS', () => {
    const speaking: EndpointingState = { phase: 'speech', speechMs: 1000, silenceMs: 0, utteranceMs: 1000 };
    /** Windows of silence until the endpoint, the audio having gone quiet `earlierMs` before the detector let go. */
    const windowsToEndpoint = (earlierMs: number, quiet = true): number => {
      let state: EndpointingState = speaking;
      for (let i = 1; ; i++) {
        const step = advanceEndpointing(state, 'silence', WINDOW, config, quiet ? i * WINDOW + earlierMs : 0);
        if (step.event) return i;
        state = step.state;
      }
    };
    expect(AUDIBLE_END_CREDIT_MS).toBe(96);
    expect(windowsToEndpoint(0)).toBe(22);
    expect(windowsToEndpoint(64)).toBe(20); // 20·32 + 64 = 704
    expect(windowsToEndpoint(96)).toBe(19);
    expect(windowsToEndpoint(500)).toBe(19); // bounded: only the detector says whether speech ended
    expect(windowsToEndpoint(500, false)).toBe(22); // loud audio (noise): no credit
    // Confident speech still resets everything, whatever the level says.
    const back = advanceEndpointing({ ...speaking, silenceMs: 600 }, 'speech', WINDOW, config, 800);
    expect(back).toEqual({ state: { phase: 'speech', speechMs: 1032, silenceMs: 0, utteranceMs: 1032 } });
  });

  it('still resets the silence when confident speech comes back after weak windows and a pause', () => {
    const { events } = run(`${repeat('S', 1000)} ww ${repeat('.', 500)} S ww ${repeat('.', 500)} ${repeat('S', 500)} ${repeat('.', 1000)}`);
    expect(events.map(([, e]) => e.type)).toEqual(['started', 'stopped']);
    // Nor does a long soft stretch end an utterance before ENDPOINT_SILENCE_MS of it.
    expect(run(`${repeat('S', 500)} ${repeat('w', 600)} ${repeat('S', 500)}`).events.map(([, e]) => e.type)).toEqual(['started']);
  });

  it('rejects nonsensical configuration', () => {
    expect(() => validateEndpointingConfig({ ...config, endpointSilenceMs: 0 })).toThrow(/endpointSilenceMs/);
    expect(() => validateEndpointingConfig({ ...config, minSpeechMs: Number.NaN })).toThrow(/minSpeechMs/);
    expect(() => validateEndpointingConfig({ ...config, maxUtteranceMs: 200 })).toThrow(/below maxUtteranceMs/);
  });
});

/**
 * The same rule on generated French speech through the production listener (real WebRTC gate, real
 * Silero). These phrases are the TUNING set of the endpointing change (bench:voice speaks others).
 */
const TUNING_PHRASES = [
  'Bonjour, je voudrais parler de mon petit-fils.',
  'Il fait beau aujourd’hui, je vais sortir faire un tour au parc.',
  'Mon médecin m’a dit de marcher un peu tous les jours.',
  'Est-ce que vous pouvez me rappeler l’heure de mon rendez-vous ?',
  'J’ai préparé une soupe aux légumes pour ce soir.',
  'Mon mari aimait beaucoup les chansons de Brassens.',
  'Je n’ai pas très bien dormi cette nuit.',
  'Les oiseaux chantent dans le cerisier depuis ce matin.',
];

interface Endpointed {
  stopsAtMs: number[];
  /** Every window Silero judged: its end (ms) and probability. Stops: the audio received when each fired (ms). */
  windows: Array<{ endMs: number; p: number }>;
}

async function endpoint(audio: ScriptedAudio): Promise<Endpointed> {
  const silero = await SileroSpeechProbability.create();
  const gate = await WebRtcVoiceGate.create();
  const out: Endpointed = { stopsAtMs: [], windows: [] };
  let received = 0;
  const listener = new Listener(
    {
      gate,
      detector: {
        windowSamples: silero.windowSamples,
        reset: () => silero.reset(),
        // 20 ms chunks complete at most one 512-sample window each: the one ending at the last whole window received.
        probability: async (window) => {
          const p = await silero.probability(window);
          out.windows.push({ endMs: samplesToMs(Math.floor(received / 512) * 512), p });
          return p;
        },
      },
      ...config,
      preRollMs: 300,
    },
    { speechStarted: () => undefined, audio: () => undefined, speechStopped: () => out.stopsAtMs.push(samplesToMs(received)) },
  );
  for (const chunk of chunks(audio.pcm, 20)) {
    received += chunk.length;
    await listener.push(chunk);
  }
  gate.close();
  silero.close();
  return out;
}

describe('endpointing on French speech (tuning phrases)', () => {
  let phrases: ScriptedAudio[];
  let paused: ScriptedAudio;

  beforeAll(async () => {
    phrases = await Promise.all(TUNING_PHRASES.map((text) => speechScript([{ silenceMs: 700 }, text, { silenceMs: 1200 }])));
    paused = await speechScript([{ silenceMs: 700 }, 'Je voudrais vous parler de', { silenceMs: 500 }, 'mon petit-fils qui vient dimanche.', { silenceMs: 1200 }]);
  });

  it('ends each phrase once ENDPOINT_SILENCE_MS of quiet follows it: Silero’s decay through the band and its late confident windows left out', async () => {
    let credited = 0;
    for (const phrase of phrases) {
      const { stopsAtMs, windows } = await endpoint(phrase);
      expect(stopsAtMs).toHaveLength(1);
      const stop = stopsAtMs[0]!;
      const confident = windows.filter((w) => w.endMs < stop && w.p >= SPEECH_START_THRESHOLD).at(-1)!;
      // 22 windows (704 ms) after the last confident window at the latest (plus the 20 ms chunk completing it), at most the credit earlier.
      expect(stop - confident.endMs).toBeLessThanOrEqual(704 + 20);
      expect(stop - confident.endMs).toBeGreaterThanOrEqual(700 - AUDIBLE_END_CREDIT_MS);
      if (stop - confident.endMs < 704) credited++;
      // Never before ENDPOINT_SILENCE_MS of true quiet (to the 8 ms level sub-frame), and no more than two windows after.
      const end = phrase.speech[0]!.endMs;
      expect(stop).toBeGreaterThanOrEqual(end + 700 - 8);
      expect(stop).toBeLessThanOrEqual(end + 700 + 64);
    }
    // Before this rule the endpoint came 22 windows after the last window at or above the continue threshold: later on every phrase.
    expect(credited).toBeGreaterThan(phrases.length / 2);
  });

  it('keeps a 500 ms mid-sentence pause inside one utterance at ENDPOINT_SILENCE_MS 700, in silence and in noise', async () => {
    for (const amplitude of [0, 100, 400]) {
      const audio = { ...paused, pcm: paused.pcm.slice() };
      if (amplitude > 0) noise(paused.durationMs, amplitude, 7).forEach((n, i) => (audio.pcm[i] = Math.max(-32768, Math.min(32767, audio.pcm[i]! + n))));
      const { stopsAtMs } = await endpoint(audio);
      expect(stopsAtMs, `noise ${amplitude}`).toHaveLength(1);
      expect(stopsAtMs[0]!).toBeGreaterThanOrEqual(paused.speech[1]!.endMs + 700 - 8);
    }
  });
});
