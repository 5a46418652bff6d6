import { beforeAll, describe, expect, it, onTestFinished } from 'vitest';
import { Listener, type ListenerOptions } from '../../machines/voice/listener.ts';
import { SileroSpeechProbability } from '../../adapters/voice/silero-vad.ts';
import { WebRtcVoiceGate } from '../../adapters/voice/webrtc-vad.ts';
import type { SpeechProbability } from '../../machines/voice/voice.port.ts';
import { chunks, concat, msToSamples, samplesToMs, speechScript, type ScriptedAudio } from '../support/speech.ts';

const defaults = { endpointSilenceMs: 700, minSpeechMs: 250, preRollMs: 300, maxUtteranceMs: 30_000 };

interface Heard {
  /** Events with the audio position (ms) at which they fired. */
  events: string[];
  at: number[];
  audio: Int16Array[];
  sileroCalls: number;
}

/** Real gate and real Silero, counted; audio streamed in `chunkMs` pieces as a kiosk sends it. */
async function listen(input: Int16Array, options: Partial<ListenerOptions> = {}, chunkMs = 20): Promise<Heard> {
  const silero = await SileroSpeechProbability.create();
  const heard: Heard = { events: [], at: [], audio: [], sileroCalls: 0 };
  const detector: SpeechProbability = {
    windowSamples: silero.windowSamples,
    reset: () => silero.reset(),
    probability: (window) => {
      heard.sileroCalls++;
      return silero.probability(window);
    },
  };
  const gate = await WebRtcVoiceGate.create();
  let received = 0;
  const listener = new Listener(
    { gate, detector, ...defaults, ...options },
    {
      speechStarted: () => {
        heard.events.push('started');
        heard.at.push(samplesToMs(received));
      },
      audio: (pcm) => heard.audio.push(pcm),
      speechStopped: (reason) => {
        heard.events.push(`stopped:${reason}`);
        heard.at.push(samplesToMs(received));
      },
    },
  );
  for (const chunk of chunks(input, chunkMs)) {
    received += chunk.length;
    await listener.push(chunk);
  }
  gate.close();
  return heard;
}

let sentence: ScriptedAudio;
let paused: ScriptedAudio;
let long: ScriptedAudio;

beforeAll(async () => {
  sentence = await speechScript([{ silenceMs: 1000 }, 'Bonjour, je voudrais parler de mon petit-fils.', { silenceMs: 1500 }]);
  paused = await speechScript([{ silenceMs: 1000 }, 'Je voudrais vous parler de', { silenceMs: 500 }, 'mon petit-fils qui vient dimanche.', { silenceMs: 1500 }]);
  long = await speechScript([
    { silenceMs: 500 },
    "Hier matin je suis allée au marché avec ma voisine et nous avons acheté des pommes, des poires et du fromage pour le déjeuner de dimanche avec toute la famille.",
    { silenceMs: 1500 },
  ]);
});

describe('Listener on French speech', () => {
  it('detects an utterance with start and stop near the truth, pre-roll first, audio contiguous', async () => {
    const heard = await listen(sentence.pcm);
    const truth = sentence.speech[0]!;
    expect(heard.events).toEqual(['started', 'stopped:silence']);
    // Confirmed after minSpeechMs of speech (plus a window and a frame of framing).
    expect(heard.at[0]).toBeGreaterThanOrEqual(truth.startMs + 200);
    expect(heard.at[0]).toBeLessThanOrEqual(truth.startMs + 250 + 100);
    // Ended after ENDPOINT_SILENCE_MS of silence.
    expect(heard.at[1]).toBeGreaterThanOrEqual(truth.endMs + 650);
    expect(heard.at[1]).toBeLessThanOrEqual(truth.endMs + 700 + 100);
    // The audio handed out is exactly the microphone's, from ~300 ms before speech to the stop.
    const audio = concat(heard.audio);
    const stop = msToSamples(heard.at[1]!);
    const first = [...Array(stop).keys()].find((at) => sentence.pcm.subarray(at, at + audio.length).every((s, i) => s === audio[i]));
    expect(first).toBeDefined();
    expect(truth.startMs - samplesToMs(first!)).toBeGreaterThanOrEqual(280);
    expect(truth.startMs - samplesToMs(first!)).toBeLessThanOrEqual(300 + 100);
    expect(samplesToMs(first! + audio.length)).toBeGreaterThan(truth.endMs + 650);
  });

  it('keeps one utterance through a 500 ms mid-sentence pause at ENDPOINT_SILENCE_MS 700', async () => {
    const [before, after] = paused.speech;
    expect(after!.startMs - before!.endMs).toBeGreaterThanOrEqual(500);
    const heard = await listen(paused.pcm);
    expect(heard.events).toEqual(['started', 'stopped:silence']);
    expect(heard.at[1]).toBeGreaterThanOrEqual(after!.endMs + 650);
    // The same pause splits the utterance when the endpointing silence is set shorter than it.
    expect((await listen(paused.pcm, { endpointSilenceMs: 300 })).events).toEqual(['started', 'stopped:silence', 'started', 'stopped:silence']);
  });

  it('hears nothing in silence or steady noise', async () => {
    const quiet = await speechScript([{ silenceMs: 3000 }, { noiseMs: 3000, amplitude: 2500 }, { noiseMs: 2000, amplitude: 300 }]);
    const heard = await listen(quiet.pcm);
    expect(heard.events).toEqual([]);
    expect(heard.audio).toEqual([]);
  });

  it('cuts an utterance at maxUtteranceMs', async () => {
    expect(long.speech[0]!.endMs - long.speech[0]!.startMs).toBeGreaterThan(5000);
    const heard = await listen(long.pcm, { maxUtteranceMs: 2000 });
    expect(heard.events.slice(0, 2)).toEqual(['started', 'stopped:max_length']);
    const utteranceMs = heard.at[1]! - (heard.at[0]! - 250);
    expect(utteranceMs).toBeGreaterThanOrEqual(2000 - 100);
    expect(utteranceMs).toBeLessThanOrEqual(2000 + 100);
    expect(heard.events.at(-1)).toBe('stopped:silence');
    // No audio is handed out twice across the cut: the total is at most the input.
    expect(concat(heard.audio).length).toBeLessThanOrEqual(long.pcm.length);
  });

  it('runs Silero only around voiced audio', async () => {
    const silent = await listen(new Int16Array(msToSamples(5000)));
    expect(silent.sileroCalls).toBe(0);
    const padded = await speechScript([{ silenceMs: 4000 }, 'Bonjour, je voudrais parler de mon petit-fils.', { silenceMs: 4000 }]);
    const heard = await listen(padded.pcm);
    expect(heard.events).toEqual(['started', 'stopped:silence']);
    const windows = padded.pcm.length / 512;
    const speechWindows = (padded.speech[0]!.endMs - padded.speech[0]!.startMs) / 32;
    expect(heard.sileroCalls).toBeGreaterThanOrEqual(speechWindows * 0.8);
    // Speech plus the gate's hangover, never the 8 s of silence around it.
    expect(heard.sileroCalls).toBeLessThanOrEqual(speechWindows + 300 / 32 + 4);
    expect(heard.sileroCalls).toBeLessThan(windows * 0.4);
  });

  it('gives the same result whatever the kiosk’s chunk size (10–200 ms, uneven)', async () => {
    const reference = await listen(paused.pcm, {}, 20);
    for (const chunkMs of [10, 200, 37.5]) {
      const heard = await listen(paused.pcm, {}, chunkMs);
      expect(heard.events).toEqual(reference.events);
      expect(concat(heard.audio)).toEqual(concat(reference.audio));
    }
  });

  it('analyses overlapping pushes in order, and reset() forgets an utterance silently', async () => {
    const silero = await SileroSpeechProbability.create();
    const gate = await WebRtcVoiceGate.create();
    const events: string[] = [];
    let audio = 0;
    const listener = new Listener(
      { gate, detector: silero, ...defaults },
      { speechStarted: () => events.push('started'), audio: (pcm) => (audio += pcm.length), speechStopped: (reason) => events.push(reason) },
    );
    // Kiosk frames arriving faster than they are analysed: nothing awaited until the end.
    const half = msToSamples(sentence.speech[0]!.startMs + 800);
    await Promise.all(chunks(sentence.pcm.subarray(0, half), 20).map((chunk) => listener.push(chunk)));
    expect(events).toEqual(['started']);
    expect(listener.speechMs).toBeGreaterThan(250);
    listener.reset();
    expect(listener.speechMs).toBe(0);
    const sentBeforeReset = audio;
    await Promise.all(chunks(new Int16Array(msToSamples(2000)), 20).map((chunk) => listener.push(chunk)));
    expect(events).toEqual(['started']);
    expect(audio).toBe(sentBeforeReset);
    // And it listens again afterwards.
    await Promise.all(chunks(sentence.pcm, 20).map((chunk) => listener.push(chunk)));
    expect(events).toEqual(['started', 'started', 'silence']);
    gate.close();
  });

  it('resolves each push on its own audio: a lagging event loop that hands over many chunks at once changes nothing its caller reads', async () => {
    /** What the session reads when a chunk's push resolves (its early flush and end-of-turn decision act on it), one line per chunk. */
    const readings = async (together: boolean): Promise<string[]> => {
      // Fresh detectors each time: Silero and the gate carry state from one stream to the next.
      const [silero, gate] = await Promise.all([SileroSpeechProbability.create(), WebRtcVoiceGate.create()]);
      onTestFinished(() => gate.close());
      const listener = new Listener({ gate, detector: silero, ...defaults }, { speechStarted: () => undefined, audio: () => undefined, speechStopped: () => undefined });
      const read = () => `${listener.speechMs} ${listener.paused} ${listener.silenceMs} ${listener.pauses}`;
      const frames = chunks(paused.pcm, 20);
      if (!together) {
        const lines: string[] = [];
        for (const frame of frames) lines.push(await listener.push(frame).then(read));
        return lines;
      }
      // Every frame pushed before any is analysed, each read as its own push resolves.
      return Promise.all(frames.map((frame) => listener.push(frame).then(read)));
    };
    const oneByOne = await readings(false);
    // The pause was seen growing chunk by chunk (the sentence has one, then its end).
    expect(new Set(oneByOne).size).toBeGreaterThan(50);
    expect(await readings(true)).toEqual(oneByOne);
  });

  it('rejects a nonsensical configuration and a wrong window', async () => {
    const silero = await SileroSpeechProbability.create();
    const gate = await WebRtcVoiceGate.create();
    const events = { speechStarted: () => undefined, audio: () => undefined, speechStopped: () => undefined };
    expect(() => new Listener({ gate, detector: silero, ...defaults, endpointSilenceMs: -1 }, events)).toThrow(/endpointSilenceMs/);
    expect(() => new Listener({ gate, detector: silero, ...defaults, preRollMs: Number.NaN }, events)).toThrow(/preRollMs/);
    await expect(silero.probability(new Int16Array(100))).rejects.toThrow(/512/);
    expect(() => gate.isVoiced(new Int16Array(100))).toThrow(/320/);
    gate.close();
    expect(() => gate.isVoiced(new Int16Array(320))).toThrow(/close/);
  });
});
