import { Readable } from 'node:stream';
import { afterEach, describe, expect, it } from 'vitest';
import { KioskClient, pcmFrames, pcmStreamFrames, pcmToBytes, readWav, streamAudio, writeWav, headerSocket } from '../src/node.ts';
import { answersStart, LocalServer } from './local-server.ts';

/** The Node entry's audio sources: a WAV or a raw PCM stream cut into microphone frames, sent in real time. */
const closers: Array<() => Promise<void> | void> = [];
afterEach(async () => {
  for (const close of closers.splice(0)) await close();
});

describe('@kohami/kiosk-client/node audio sources', () => {
  it('pcmFrames: 20 ms frames, the last padded with silence', () => {
    const frames = [...pcmFrames(Int16Array.from({ length: 700 }, (_, i) => i + 1), 16_000)];
    expect(frames.map((f) => f.length)).toEqual([320, 320, 320]);
    expect([frames[2]![59], frames[2]![60]]).toEqual([700, 0]);
  });

  it('pcmStreamFrames: chunks that split a sample or a frame are joined, the end pads the last frame', async () => {
    const samples = Int16Array.from({ length: 500 }, (_, i) => i - 250);
    const bytes = pcmToBytes(samples);
    // Odd-sized chunks: samples split across them.
    const chunks = [bytes.subarray(0, 3), bytes.subarray(3, 641), bytes.subarray(641, 999), bytes.subarray(999)];
    const frames: Int16Array[] = [];
    for await (const f of pcmStreamFrames(Readable.from(chunks.map((c) => Buffer.from(c))), 16_000)) frames.push(f);
    expect(frames.map((f) => f.length)).toEqual([320, 320]);
    expect([...frames[0]!, ...frames[1]!.subarray(0, 180)]).toEqual([...samples]);
    expect(frames[1]![180]).toBe(0);
  });

  it('a WAV written and read back is the same samples', () => {
    const samples = Int16Array.from([1, -2, 3]);
    expect(readWav(writeWav({ sampleRate: 16_000, samples }), 16_000).samples).toEqual(samples);
  });

  it('streamAudio sends each frame as one binary microphone frame, and stops when told', async () => {
    const server = await LocalServer.start(answersStart());
    closers.push(() => server.close());
    const client = new KioskClient({ url: server.url, token: 'kiosk_local', socket: headerSocket, reconnect: false });
    closers.push(() => client.close());
    await client.connect({ mode: 'voice', audio: { input: { encoding: 'pcm_s16le', sampleRate: 16000 }, output: { accept: [{ encoding: 'pcm_s16le', sampleRate: 24000 }] }, kiosk: { aec: true } } });
    let sent = 0;
    const count = await streamAudio(client, pcmFrames(new Int16Array(320 * 5).fill(7), 16_000), { stop: () => sent++ >= 3 });
    expect(count).toBe(3);
    await server.until(() => server.received.filter((r) => typeof r !== 'string').length === 3);
    const binary = server.received.filter((r): r is Buffer => typeof r !== 'string');
    expect(binary.map((b) => b.length)).toEqual([640, 640, 640]);
    expect(binary[0]!.readInt16LE(0)).toBe(7);
  });
});
