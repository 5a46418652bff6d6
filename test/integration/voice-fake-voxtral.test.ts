import { once } from 'node:events';
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it, vi } from 'vitest';
import WebSocket from 'ws';
import { AudioClock } from '../support/audio-clock.ts';
import { expectContractViolations } from '../support/contract-violations.ts';
import { DEFAULT_STREAMING_DELAY_MS, FakeVoxtral, placeWords, type ScriptedUtterance } from '../support/fake-voxtral.ts';

/**
 * The tests' Voxtral realtime fake keeps Voxtral's timing: interim words leave about
 * `target_streaming_delay_ms` after the audio where they were said, the rest at the flush, and a
 * scripted pause holds its words back. Driven over a raw socket in fake time: audio in 100 ms appends,
 * the clock advanced 100 ms per append, as the runtime streams in real time.
 */
let voxtral: FakeVoxtral;
let socket: WebSocket;
let received: Array<Record<string, unknown>>;
const CHUNK_MS = 100;

beforeAll(async () => {
  voxtral = await new FakeVoxtral().start();
});
afterAll(() => voxtral.stop());

beforeEach(async () => {
  voxtral.utterances.length = 0;
  socket = new WebSocket(`${voxtral.baseUrl}/audio/transcriptions/realtime?model=voxtral-test`, { headers: { authorization: 'Bearer k' } });
  received = [];
  socket.on('message', (data) => received.push(JSON.parse(String(data)) as Record<string, unknown>));
  await once(socket, 'open');
  vi.useFakeTimers({ toFake: ['setTimeout', 'clearTimeout', 'performance'] });
});
afterEach(() => {
  vi.useRealTimers();
  socket.close();
});

const record = () => voxtral.sockets.at(-1)!;
let barriers = 0;
/** Resolves once the fake has handled every message sent before: an unknown message is answered with an error, in order. */
async function handled(): Promise<void> {
  // The barrier is off-contract on purpose: the fake refuses it, after every message before it.
  expectContractViolations((v) => v.endpoint.startsWith('realtime barrier-'));
  const id = `barrier-${++barriers}`;
  socket.send(JSON.stringify({ type: id }));
  while (!received.some((m) => m.type === 'error' && String((m.error as { message: string }).message).includes(id))) await once(socket, 'message');
}

/** Streams `ms` of audio in real (fake) time; returns when each append arrived, from the stream's start (its `t0`). */
async function stream(ms: number): Promise<number[]> {
  const arrivals: number[] = [];
  const t0 = performance.now();
  for (let at = 0; at < ms; at += CHUNK_MS) {
    // An append leaves once its 100 ms have been captured.
    vi.advanceTimersByTime(CHUNK_MS);
    socket.send(JSON.stringify({ type: 'input_audio.append', audio: Buffer.alloc(CHUNK_MS * 32).toString('base64') }));
    await handled();
    arrivals.push(performance.now() - t0);
  }
  return arrivals;
}

async function flush(): Promise<Record<string, unknown>> {
  socket.send(JSON.stringify({ type: 'input_audio.flush' }));
  await handled();
  vi.advanceTimersByTime(voxtral.transcriptionLatencyMs);
  while (!received.some((m) => m.type === 'transcription.done')) await once(socket, 'message');
  return received.splice(0).find((m) => m.type === 'transcription.done')!;
}

/** When the append holding `endMs` of the utterance's audio arrived. */
const arrivalOf = (arrivals: number[], endMs: number) => arrivals[Math.ceil(endMs / CHUNK_MS) - 1]!;
/** The interims sent from the `from`-th on, their times from the clock at the call (before the stream). */
function interimsSince(from: number, t0: number) {
  return record().interims.slice(from).map((i) => ({ ...i, at: i.at - t0 }));
}

describe('the Voxtral realtime fake', () => {
  it('places words along the voiced spans by character offset, none inside a pause', () => {
    // 8 characters over 800 ms of voiced time: 2/8, 5/8, 8/8 of it, the first 500 ms in the first span.
    expect(placeWords(['ab', 'cd', 'ef'], [{ startMs: 0, endMs: 500 }, { startMs: 2000, endMs: 2300 }])).toEqual([200, 500, 2300]);
    // Spans that say their words: each span's words within it (« cd » 2/5 of the second span).
    expect(placeWords(['ab', 'cd', 'ef'], [{ startMs: 0, endMs: 500, text: 'ab' }, { startMs: 2000, endMs: 2300, text: 'cd ef' }])).toEqual([500, 2120, 2300]);
    expect(() => placeWords(['ab'], [{ startMs: 0, endMs: 500, text: 'ab cd' }])).toThrow(/2 words/);
    // A phrase with a pause of its own: the spans after it with no text are its voiced rest (« cd ef »
    // over 100 + 300 ms: « cd » 2/5 of it, in its first span; « ef » at the end of its second).
    expect(placeWords(['ab', 'cd', 'ef'], [{ startMs: 0, endMs: 500, text: 'ab' }, { startMs: 2000, endMs: 2100, text: 'cd ef' }, { startMs: 2600, endMs: 2900 }])).toEqual([500, 2600 + 60, 2900]);
  });

  it('releases each word the streaming delay after the audio where it was said arrived; a word after a 1.5 s pause waits for its audio', async () => {
    const script: ScriptedUtterance = {
      text: 'Je suis allée au marché et puis',
      speech: [{ startMs: 300, endMs: 1300, text: 'Je suis allée au marché' }, { startMs: 2800, endMs: 3500, text: 'et puis' }],
    };
    voxtral.utterances.push(script);
    const t0 = performance.now();
    const arrivals = await stream(4000);
    const ends = voxtral.wordEnds(script);
    const interims = interimsSince(0, t0);
    expect(interims.map((i) => i.text)).toEqual(['Je', 'suis', 'allée', 'au', 'marché', 'et', 'puis']);
    for (const [i, interim] of interims.entries()) expect(interim.at).toBe(arrivalOf(arrivals, ends[i]!) + DEFAULT_STREAMING_DELAY_MS);
    // « marché » is said by 1300 ms: it leaves at 1780, inside the pause; « et » (said by 3000 ms, after it) at 3480, not before.
    expect(interims[4]!.at).toBe(1780);
    expect(ends[5]).toBe(3000);
    expect(interims[5]!.at).toBe(3480);
    expect((await flush()).text).toBe('Je suis allée au marché et puis');
  });

  it('sends the words still in the delay at the flush, and the final transcript', async () => {
    voxtral.utterances.push({ text: 'Bonjour je voudrais parler de mon petit-fils', speech: [{ startMs: 300, endMs: 2300 }] });
    // Said by 618, 754, 1164, 1482, 1618, 1800 and 2300 ms: by 2400 ms the last is still in the delay.
    await stream(2400);
    const early = record().interims.map((i) => i.text);
    expect(early).toEqual(['Bonjour', 'je', 'voudrais', 'parler', 'de', 'mon']);
    const done = await flush();
    expect(done.text).toBe('Bonjour je voudrais parler de mon petit-fils');
    expect(record().interims.map((i) => i.text)).toEqual(early);
  });

  it('a flush in the middle of a scripted pause returns the words said; the rest are the next utterance’s, after its pre-roll', async () => {
    voxtral.utterances.push({
      text: 'Je suis allée au marché et puis',
      speech: [{ startMs: 300, endMs: 1300, text: 'Je suis allée au marché' }, { startMs: 2800, endMs: 3500, text: 'et puis' }],
    });
    await stream(2000);
    expect((await flush()).text).toBe('Je suis allée au marché');
    // « et » ends 200 ms into the second span: 500 ms into the next utterance's audio, after its 300 ms of pre-roll.
    expect(voxtral.utterances).toEqual([{ text: 'et puis', speech: [{ startMs: 300, endMs: 1000 }], wordEndsMs: [500, 1000] }]);
    const from = record().interims.length;
    const t0 = performance.now();
    await stream(1600);
    expect(interimsSince(from, t0).map((i) => [i.text, i.at])).toEqual([['et', 980], ['puis', 1480]]);
    expect((await flush()).text).toBe('et puis');
    expect(voxtral.utterances).toEqual([]);
  });

  it('with a clock, hears where its audio lies in the script’s timeline: no pre-roll is assumed, and a flush keeps the rest’s times', async () => {
    // The utterance's own audio: 600 ms of digital silence, then "speech" (no two 10 ms alike) to 3 s.
    const audio = new Int16Array(48_000);
    for (let i = 9600, x = 7; i < audio.length; i++) audio[i] = ((x = (Math.imul(x, 1103515245) + 12345) >>> 0) >>> 20) - 2048;
    const clock = new AudioClock(16_000);
    clock.set(audio);
    voxtral.clock = (_socket, pcm) => clock.heard(pcm);
    const send = async (from: number, to: number) => {
      vi.advanceTimersByTime(((to - from) * 1000) / 16_000);
      socket.send(JSON.stringify({ type: 'input_audio.append', audio: Buffer.from(audio.buffer, from * 2, (to - from) * 2).toString('base64') }));
      await handled();
    };
    try {
      voxtral.utterances.push({ text: 'un deux trois', speech: [{ startMs: 700, endMs: 1300, text: 'un deux' }, { startMs: 2200, endMs: 2800, text: 'trois' }] });
      // The runtime's listener heard the speech late: its stream starts at 500 ms, not 300 ms before the speech.
      for (let at = 8000; at < 24_000; at += 1600) await send(at, at + 1600);
      // « un » is said by 871 ms (2/7 of its span) and leaves 480 ms after; « deux » (1300 ms) is still in the delay.
      expect(record().interims.map((i) => i.text)).toEqual(['un']);
      expect((await flush()).text).toBe('un deux');
      // The words not said keep their times in the audio's own timeline.
      expect(voxtral.utterances).toEqual([{ text: 'trois', speech: [{ startMs: 2200, endMs: 2800 }], wordEndsMs: [2800] }]);
      // After the pause, led by 100 ms of the runtime's own silence: found again, « trois » said by 2800.
      socket.send(JSON.stringify({ type: 'input_audio.append', audio: Buffer.concat([Buffer.alloc(3200), Buffer.from(audio.buffer, 32_000 * 2, 1600 * 2)]).toString('base64') }));
      await handled();
      for (let at = 33_600; at < 46_400; at += 1600) await send(at, at + 1600);
      expect((await flush()).text).toBe('trois');
    } finally {
      voxtral.clock = null;
    }
  });

  it('follows the target_streaming_delay_ms a client sets, and the fake’s own setting otherwise', async () => {
    socket.send(JSON.stringify({ type: 'session.update', session: { target_streaming_delay_ms: 960 } }));
    voxtral.utterances.push({ text: 'un deux', wordEndsMs: [350, 650] });
    const t0 = performance.now();
    await stream(2000);
    expect(interimsSince(0, t0).map((i) => i.at)).toEqual([400 + 960, 700 + 960]);
    await flush();
  });

  it('without times, places the words at the fake’s pace from the pre-roll, and gives them all at the flush', async () => {
    voxtral.streamingDelayMs = 240;
    try {
      // 13 characters at 70 ms from 300 ms: « Il » ends at 300 + 2/13 × 910 = 440 ms, « pleut » at 1210 ms.
      voxtral.utterances.push({ text: 'Il pleut fort' });
      const t0 = performance.now();
      await stream(800);
      expect(interimsSince(0, t0)).toEqual([{ text: 'Il', audioMs: 700, at: 500 + 240 }]);
      expect((await flush()).text).toBe('Il pleut fort');
    } finally {
      voxtral.streamingDelayMs = DEFAULT_STREAMING_DELAY_MS;
    }
  });
});
