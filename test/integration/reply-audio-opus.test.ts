import { describe, expect, it } from 'vitest';
import { EspeakSpeaker } from '../../adapters/voice/espeak-speaker.ts';
import { opusCodec } from '../../adapters/voice/opus-codec.ts';
import { decodeFrameHeader } from '../../runtime/protocol/frame-header.ts';
import type { ServerFrame } from '../../runtime/protocol/server-frames.ts';
import { ReplyAudio } from '../../runtime/voice/reply-audio.ts';
import type { VoiceLink } from '../../runtime/voice/voice-link.ts';
import { trackedCodec } from '../support/audio-quality.ts';

const RATE = 24_000;
const PACKET = RATE / 50;
/** Every sentence is "pre-synthesized" as a second and 10 ms of tone (no whole number of packets): no speech service is involved. */
const SENTENCE_SAMPLES = RATE + RATE / 100;
const line = () => [Int16Array.from({ length: SENTENCE_SAMPLES }, (_, i) => Math.round(Math.sin(i / 5) * 8000))];

function recordingLink(): VoiceLink & { frames: ServerFrame[]; audio: Uint8Array[] } {
  const link = {
    frames: [] as ServerFrame[],
    audio: [] as Uint8Array[],
    unreadBytes: 0,
    send: (frame: ServerFrame) => void link.frames.push(frame),
    sendAudio: (bytes: Uint8Array) => void link.audio.push(bytes),
  };
  return link;
}

function opusReply(link: VoiceLink, codec = trackedCodec()): { reply: ReplyAudio; open: Set<object> } {
  const reply = new ReplyAudio({ turnId: 'v1', link, speaker: new EspeakSpeaker(), lines: line, sampleRate: RATE, opus: codec.codec.encoder(RATE), onFirstAudio: () => {}, onSpeechError: (err) => { throw err; } });
  return { reply, open: codec.open };
}

describe('Opus reply audio', () => {
  it('20 ms packets with contiguous offsets across sentences, marks where the sentences end, the last packet padded; the encoder freed at the end', async () => {
    const link = recordingLink();
    const { reply, open } = opusReply(link);
    reply.delta('Il fait beau aujourd’hui. ');
    reply.delta('Allons au marché ensemble.');
    reply.finish('Il fait beau aujourd’hui. Allons au marché ensemble.');
    await reply.sent;
    expect(open.size).toBe(0);
    expect(link.frames[0]).toEqual({ type: 'reply.audio.start', turnId: 'v1', encoding: 'opus', sampleRate: RATE });
    const decoder = opusCodec().decoder(RATE);
    let offset = 0;
    for (const bytes of link.audio) {
      const { turnId, sampleOffset, payload } = decodeFrameHeader(bytes);
      expect({ turnId, sampleOffset }).toEqual({ turnId: 'v1', sampleOffset: offset });
      expect(decoder.decode(payload)).toHaveLength(PACKET);
      offset += PACKET;
    }
    decoder.close();
    const total = 2 * SENTENCE_SAMPLES;
    expect(offset).toBe(Math.ceil(total / PACKET) * PACKET);
    const marks = link.frames.filter((f) => f.type === 'reply.audio.mark');
    expect(marks.map((m) => m.sampleOffset)).toEqual([SENTENCE_SAMPLES, total]);
    expect(link.frames.at(-1)).toEqual({ type: 'reply.audio.end', turnId: 'v1', durationMs: Math.round((offset * 1000) / RATE) });
  });

  it('a reply cancelled before it is spoken frees its encoder and sends nothing', async () => {
    const link = recordingLink();
    const { reply, open } = opusReply(link);
    reply.finish('Bonjour Marie.');
    reply.cancel();
    await reply.sent;
    expect(open.size).toBe(0);
    expect(link.audio).toEqual([]);
  });
});
