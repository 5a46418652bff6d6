import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { EspeakSpeaker } from '../../adapters/voice/espeak-speaker.ts';
import { MistralSpeaker } from '../../adapters/voice/mistral-speaker.ts';
import { opusCodec } from '../../adapters/voice/opus-codec.ts';
import type { SpeakerPort } from '../../machines/voice/voice.port.ts';
import { decodeFrameHeader } from '../../runtime/protocol/frame-header.ts';
import type { ServerFrame } from '../../runtime/protocol/server-frames.ts';
import { FallbackSpeaker } from '../../runtime/voice/fallback-speaker.ts';
import { ReplyAudio, type LineLookup } from '../../runtime/voice/reply-audio.ts';
import type { VoiceLink } from '../../runtime/voice/voice-link.ts';
import { trackedCodec } from '../support/audio-quality.ts';
import { fakeSpeechDurationMs, fakeSpeechPackets, FakeVoxtral } from '../support/fake-voxtral.ts';

const RATE = 24_000;
const PACKET = RATE / 50;
/** A pre-synthesized line: a second and 10 ms of tone (no whole number of packets). */
const LINE_SAMPLES = RATE + RATE / 100;
const LINE = 'Je suis là, Marie.';
const linePcm = Int16Array.from({ length: LINE_SAMPLES }, (_, i) => Math.round(Math.sin(i / 5) * 8000));
const oneLine: LineLookup = (text) => (text === LINE ? [linePcm] : undefined);

let voxtral: FakeVoxtral;
beforeAll(async () => {
  voxtral = await new FakeVoxtral().start();
});
afterAll(() => voxtral.stop());

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

function opusReply(link: VoiceLink, options: { speaker?: SpeakerPort; lines?: LineLookup; codec?: ReturnType<typeof trackedCodec> } = {}) {
  const codec = options.codec ?? trackedCodec();
  const errors: unknown[] = [];
  const reply = new ReplyAudio({ turnId: 'v1', link, speaker: options.speaker ?? new EspeakSpeaker(), lines: options.lines ?? (() => undefined), sampleRate: RATE, opus: codec.codec, onFirstAudio: () => {}, onSpeechError: (err) => void errors.push(err) });
  return { reply, codec, errors };
}

/** Every frame's header and payload, checked contiguous (each packet's offset where the last one ended, by its decoded length). */
function contiguousPackets(link: { audio: Uint8Array[] }): { payloads: Uint8Array[]; samples: number } {
  const decoder = opusCodec().decoder(RATE);
  let offset = 0;
  const payloads: Uint8Array[] = [];
  for (const bytes of link.audio) {
    const { turnId, sampleOffset, payload } = decodeFrameHeader(bytes);
    expect({ turnId, sampleOffset }).toEqual({ turnId: 'v1', sampleOffset: offset });
    offset += decoder.decode(payload).length;
    payloads.push(payload);
  }
  decoder.close();
  return { payloads, samples: offset };
}

const mistral = () => new MistralSpeaker({ apiKey: 'test-key', baseUrl: voxtral.baseUrl, env: 'test' });
const marks = (link: { frames: ServerFrame[] }) => link.frames.flatMap((f) => (f.type === 'reply.audio.mark' ? [f.sampleOffset] : []));

describe('Opus reply audio', () => {
  it('relays the speech service’s Opus: its packets reach the kiosk byte for byte, none encoded, with contiguous offsets, marks and the end from their durations', async () => {
    const link = recordingLink();
    const { reply, codec, errors } = opusReply(link, { speaker: mistral() });
    const sentences = ['Il fait beau aujourd’hui.', 'Allons au marché ensemble.'];
    reply.delta(`${sentences[0]} `);
    reply.delta(sentences[1]!);
    reply.finish(sentences.join(' '));
    await reply.sent;
    expect(errors).toEqual([]);
    expect(voxtral.speechRequests.slice(-2).map((r) => r.body.response_format)).toEqual(['opus', 'opus']);
    expect(codec.counts).toEqual({ encoders: 0, packets: 0 });
    const { payloads, samples } = contiguousPackets(link);
    expect(payloads).toEqual(sentences.flatMap((s) => fakeSpeechPackets(s, 'tone')));
    const first = (fakeSpeechDurationMs(sentences[0]!) * RATE) / 1000;
    expect(marks(link)).toEqual([first, samples]);
    expect(link.frames.at(-1)).toEqual({ type: 'reply.audio.end', turnId: 'v1', durationMs: sentences.reduce((n, s) => n + fakeSpeechDurationMs(s), 0) });
  });

  /** How the service can fail to give Opus: refused (a 422), or bytes in another container (an MP3's). */
  const noOpus = {
    refused: (on: boolean) => void (on ? voxtral.behaviours.add('speech-opus-refused') : voxtral.behaviours.delete('speech-opus-refused')),
    'not-ogg': (on: boolean) => void (voxtral.speechOpus = on ? 'not-ogg' : 'ogg'),
  };
  it.each(['refused', 'not-ogg'] as const)('a service whose Opus is %s is asked for PCM, which is encoded: the senior hears the sentence all the same', async (opus) => {
    noOpus[opus](true);
    try {
      const link = recordingLink();
      const speaker = mistral();
      const { reply, codec, errors } = opusReply(link, { speaker: new FallbackSpeaker({ primary: speaker, fallback: new EspeakSpeaker() }) });
      reply.finish('Il fait beau aujourd’hui.');
      await reply.sent;
      expect(errors).toEqual([]);
      expect(voxtral.speechRequests.slice(-2).map((r) => r.body.response_format)).toEqual(['opus', 'pcm']);
      expect(codec.counts.encoders).toBe(1);
      const { samples } = contiguousPackets(link);
      expect(samples).toBe(Math.ceil((fakeSpeechDurationMs('Il fait beau aujourd’hui.') * RATE) / 1000 / PACKET) * PACKET);
      // The refusal is remembered: the next sentence goes straight to PCM.
      const next = opusReply(recordingLink(), { speaker });
      next.reply.finish('À tout à l’heure.');
      await next.reply.sent;
      expect(voxtral.speechRequests.at(-1)!.body.response_format).toBe('pcm');
    } finally {
      noOpus[opus](false);
    }
  });

  it('a relayed stream cut mid-sentence: the fallback speaks the rest as PCM, encoded after the relayed packets, the offsets contiguous', async () => {
    voxtral.speechFault = { afterMs: 400, kind: 'drop' };
    try {
      const link = recordingLink();
      const failures: unknown[] = [];
      const speaker = new FallbackSpeaker({ primary: mistral(), fallback: new EspeakSpeaker(), onSpeechError: (err) => void failures.push(err) });
      const { reply, codec, errors } = opusReply(link, { speaker });
      const sentence = 'Le marché du samedi est un vrai plaisir pour tout le monde.';
      reply.finish(sentence);
      await reply.sent;
      expect(errors).toEqual([]);
      expect(failures).toHaveLength(1);
      const relayed = fakeSpeechPackets(sentence, 'tone');
      const { payloads, samples } = contiguousPackets(link);
      // The packets that arrived before the cut, byte for byte, then espeak's rest, encoded.
      const before = payloads.findIndex((p, i) => !relayed[i] || p.length !== relayed[i]!.length || p.some((b, j) => b !== relayed[i]![j]));
      expect(before).toBeGreaterThan(0);
      expect(payloads.slice(0, before)).toEqual(relayed.slice(0, before));
      expect(codec.counts.encoders).toBe(1);
      expect(codec.counts.packets).toBe(payloads.length - before);
      // The mark counts the sentence's own samples, not the last packet's padding.
      const [mark] = marks(link);
      expect(samples - mark!).toBeGreaterThanOrEqual(0);
      expect(samples - mark!).toBeLessThan(PACKET);
    } finally {
      voxtral.speechFault = null;
    }
  });

  it('PCM with no Opus of its own (espeak) is encoded in 20 ms packets carried across sentences, the last one padded; the encoder freed at the end', async () => {
    const link = recordingLink();
    const { reply, codec } = opusReply(link);
    reply.delta('Il fait beau aujourd’hui. ');
    reply.delta('Allons au marché ensemble.');
    reply.finish('Il fait beau aujourd’hui. Allons au marché ensemble.');
    await reply.sent;
    expect(codec.open.size).toBe(0);
    expect(codec.counts.encoders).toBe(1);
    expect(link.frames[0]).toEqual({ type: 'reply.audio.start', turnId: 'v1', encoding: 'opus', sampleRate: RATE });
    const { payloads, samples } = contiguousPackets(link);
    expect(samples).toBe(payloads.length * PACKET);
    const [first, last] = marks(link);
    // The first sentence ends inside a packet: its mark counts its own samples, not the padding.
    expect(first! % PACKET).not.toBe(0);
    expect(samples - last!).toBeLessThan(PACKET);
    expect(link.frames.at(-1)).toEqual({ type: 'reply.audio.end', turnId: 'v1', durationMs: Math.round((samples * 1000) / RATE) });
  });

  it('a pre-synthesized line is encoded by the first reply that speaks it, whole packets; the next reply sends the same packets, encoding nothing', async () => {
    const firstLink = recordingLink();
    const first = opusReply(firstLink, { lines: oneLine });
    first.reply.finish(LINE);
    await first.reply.sent;
    const packets = Math.ceil(LINE_SAMPLES / PACKET);
    expect(first.codec.counts).toEqual({ encoders: 1, packets });
    expect(first.codec.open.size).toBe(0);
    const secondLink = recordingLink();
    const second = opusReply(secondLink, { lines: oneLine });
    second.reply.finish(LINE);
    await second.reply.sent;
    expect(second.codec.counts).toEqual({ encoders: 0, packets: 0 });
    expect(contiguousPackets(secondLink).payloads).toEqual(contiguousPackets(firstLink).payloads);
    expect(marks(secondLink)).toEqual([packets * PACKET]);
  });

  it('a line cut short is not kept: the next reply encodes it again, whole', async () => {
    const pcm = linePcm.slice();
    const lines: LineLookup = (text) => (text === LINE ? [pcm] : undefined);
    const link = recordingLink();
    const cut = opusReply(link, { lines });
    // A barge-in three packets into the line.
    link.sendAudio = (bytes) => void (link.audio.push(bytes) === 3 && cut.reply.cancel());
    cut.reply.finish(LINE);
    await cut.reply.sent;
    expect(cut.codec.counts.packets).toBe(3);
    expect(cut.codec.open.size).toBe(0);
    const again = opusReply(recordingLink(), { lines });
    again.reply.finish(LINE);
    await again.reply.sent;
    expect(again.codec.counts.packets).toBe(Math.ceil(LINE_SAMPLES / PACKET));
  });

  it('a reply cancelled before it is spoken makes no encoder and sends nothing', async () => {
    const link = recordingLink();
    const { reply, codec } = opusReply(link);
    reply.finish('Bonjour Marie.');
    reply.cancel();
    await reply.sent;
    expect(codec.counts.encoders).toBe(0);
    expect(link.audio).toEqual([]);
  });
});
