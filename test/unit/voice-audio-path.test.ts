import { describe, expect, it } from 'vitest';
import { loadCacheVariations } from '../../adapters/fluxes/cache-flux.adapter.ts';
import { EspeakSpeaker, ESPEAK_SAMPLE_RATE } from '../../adapters/voice/espeak-speaker.ts';
import { LINE_RETRY_MS, LineCache, SharedLines, sessionLines } from '../../runtime/voice/line-cache.ts';
import { float32ToS16, Float32LeDecoder } from '../../machines/voice/resample.ts';

describe('Float32LeDecoder (Voxtral speech deltas)', () => {
  const floats = Float32Array.from({ length: 301 }, (_, i) => Math.sin(i / 7) * (i % 11 === 0 ? 1.5 : 0.9));
  const expected = float32ToS16(floats);
  const bytes = new Uint8Array(floats.buffer);

  it('decodes samples split anywhere across deltas, at any byte offset, exactly as the whole', () => {
    for (const sizes of [[1], [3], [5, 2, 7], [4], [1203, 1], [2, 1, 1, 9]]) {
      const decoder = new Float32LeDecoder();
      const out: number[] = [];
      for (let at = 0, i = 0; at < bytes.length; i++) {
        const n = sizes[i % sizes.length]!;
        // Copied at an odd offset of a bigger buffer, as a pooled base64 decode may hand it.
        const holder = new Uint8Array(n + 3);
        holder.set(bytes.subarray(at, at + n), 3);
        out.push(...decoder.push(holder.subarray(3, 3 + Math.min(n, bytes.length - at))));
        at += n;
      }
      expect(Int16Array.from(out), `sizes ${sizes.join(',')}`).toEqual(expected);
    }
  });

  it('yields nothing until a whole sample has arrived', () => {
    const decoder = new Float32LeDecoder();
    expect(decoder.push(bytes.subarray(0, 3))).toHaveLength(0);
    expect([...decoder.push(bytes.subarray(3, 4))]).toEqual([expected[0]]);
  });
});

describe('pre-synthesized lines kept once, at the kiosk’s rate', () => {
  const variations = loadCacheVariations();
  const marie = sessionLines(variations, { preferredName: 'Marie', isFreshSenior: false });
  const lucien = sessionLines(variations, { preferredName: 'Lucien', isFreshSenior: false });

  it('stores each line as one array at the negotiated rate, shares a personal line between the sessions that say it, and keeps it for the senior’s next session', async () => {
    const espeak = new EspeakSpeaker();
    let requests = 0;
    const speaker = { voiceId: espeak.voiceId, sampleRate: espeak.sampleRate, synthesize: (t: string, s: AbortSignal) => (requests++, espeak.synthesize(t, s)) };
    const shared = new SharedLines();
    const open = (lines: typeof marie) => new LineCache({ speaker, lastResort: espeak, lines, shared, seniorId: lines === marie ? 'marie' : 'lucien', sampleRate: 16_000 });

    const first = open(marie);
    await first.warm();
    const rendered = requests;
    expect(rendered).toBe(marie.always.length + marie.shared.length + marie.personal.length);
    const greeting = marie.personal[0]!;
    const line = first.get(greeting)!;
    expect(line).toHaveLength(1);
    // At 16 kHz: the render's duration (within 1 ms) in 16,000 samples a second, not espeak's 22,050.
    const native = await collect(espeak.synthesize(greeting, new AbortController().signal));
    expect(Math.abs(line[0]!.length - Math.round((native * 16_000) / ESPEAK_SAMPLE_RATE))).toBeLessThanOrEqual(16);

    const second = open(marie);
    await second.warm();
    expect(requests).toBe(rendered); // nothing synthesized again
    expect(second.get(greeting)![0]).toBe(line[0]); // the same memory, not a copy

    const other = open(lucien);
    await other.warm();
    expect(requests).toBe(rendered + lucien.personal.length);
    expect(other.get(greeting)).toBeUndefined();

    first.close();
    expect(first.get(greeting)).toBeUndefined();
    expect(second.get(greeting)![0]).toBe(line[0]); // still held by the other session
    second.close();
    const third = open(marie);
    await third.warm();
    // The last holder gone, the senior's lines stay kept (like the SOS and neutral lines): nothing is asked again.
    expect(requests).toBe(rendered + lucien.personal.length);
    expect(third.get(greeting)![0]).toBe(line[0]);
    third.close();
    other.close();
  });

  it('keeps the lines no session holds within maxPersonalBytes, least recently used going first, a held line never', () => {
    const line = (samples: number) => new Int16Array(samples);
    const shared = new SharedLines(LINE_RETRY_MS, 7_000);
    shared.hold('a1', 'a', line(1_000));
    shared.release('a1');
    shared.hold('b1', 'b', line(1_000));
    shared.release('b1');
    expect(shared.personalSize).toBe(4_000);
    // a1 is spoken again: b1 is now the least recently used.
    expect(shared.hold('a1', 'a')).toBeDefined();
    shared.release('a1');
    shared.hold('c1', 'c', line(2_000));
    expect(shared.held('b1')).toBeUndefined();
    expect(shared.held('a1')).toBeDefined();
    expect(shared.personalSize).toBe(6_000);
    // Held lines past the cap stay (their sessions speak them); the unheld one goes.
    shared.hold('d1', 'd', line(2_000));
    expect(shared.held('a1')).toBeUndefined();
    expect([shared.held('c1'), shared.held('d1')].every(Boolean)).toBe(true);
    expect(shared.personalSize).toBe(8_000);
  });

  it('drops a senior’s kept lines when they are erased, held or not, and when the lines of their name change', () => {
    const shared = new SharedLines();
    shared.claim('a', ['Bonjour Marie, ravi de vous revoir.']);
    shared.hold('a1', 'a', new Int16Array(10));
    shared.hold('a2', 'a', new Int16Array(10));
    shared.release('a2');
    shared.hold('b1', 'b', new Int16Array(10));
    expect(shared.invalidateSenior('a')).toBe(2);
    expect([shared.held('a1'), shared.held('a2')]).toEqual([undefined, undefined]);
    expect(shared.held('b1')).toBeDefined();

    shared.claim('b', ['Bonjour Lucien, ravi de vous revoir.']);
    expect(shared.held('b1')).toBeDefined();
    // Lucien is now called Luc: the audio of « Bonjour Lucien » is not kept for him.
    shared.claim('b', ['Bonjour Luc, ravi de vous revoir.']);
    expect(shared.held('b1')).toBeUndefined();
    expect(shared.personalSize).toBe(0);
  });
});

async function collect(chunks: AsyncIterable<Int16Array>): Promise<number> {
  let n = 0;
  for await (const chunk of chunks) n += chunk.length;
  return n;
}
