import { describe, expect, it } from 'vitest';
import { negotiateAudio, parseClientFrame, type VoiceAudioRequest } from '../../runtime/protocol/messages.ts';

const audio = (patch: Partial<VoiceAudioRequest> = {}): VoiceAudioRequest => ({
  input: { encoding: 'pcm_s16le', sampleRate: 16000 },
  output: { accept: [{ encoding: 'pcm_s16le', sampleRate: 24000 }] },
  kiosk: { aec: true },
  ...patch,
});

describe('kiosk protocol, voice mode', () => {
  it('accepts the voice frames', () => {
    for (const frame of [
      { type: 'session.start', mode: 'voice', audio: audio() },
      { type: 'session.start', mode: 'text' },
      { type: 'playback.progress', turnId: 'v1', playedMs: 1200 },
      { type: 'playback.done', turnId: 'v1' },
      { type: 'interrupt', turnId: 'v1', playedMs: 640 },
      { type: 'mic', muted: true },
    ]) {
      expect(parseClientFrame(JSON.stringify(frame))).toEqual({ ok: true, frame });
    }
  });

  it.each([
    ['{"type":"session.start","mode":"voice"}', 'audio'],
    ['{"type":"session.start","mode":"voice","audio":{"input":{"encoding":"pcm_s16le","sampleRate":16000},"output":{"accept":[]},"kiosk":{"aec":true}}}', 'audio.output.accept'],
    ['{"type":"session.start","mode":"voice","audio":{"input":{"encoding":"pcm_s16le","sampleRate":16000},"output":{"accept":[{"encoding":"pcm_s16le","sampleRate":24000}]},"kiosk":{}}}', 'audio.kiosk.aec'],
    ['{"type":"session.start","mode":"voice","audio":{"input":{"encoding":"pcm_s16le","sampleRate":16000},"output":{"accept":[{"encoding":"pcm_s16le","sampleRate":24000}]},"kiosk":{"aec":true,"gate":"yes"}}}', 'audio.kiosk.gate'],
    ['{"type":"session.start","mode":"radio"}', 'frame'],
    ['{"type":"playback.progress","turnId":"v1","playedMs":-5}', 'playedMs'],
    ['{"type":"mic","muted":"yes"}', 'muted'],
    ['{"type":"interrupt","turnId":"v1","playedMs":"10"}', 'playedMs'],
  ])('%s → invalid_frame naming %s', (raw, field) => {
    const result = parseClientFrame(raw);
    expect(result).toMatchObject({ ok: false, code: 'invalid_frame' });
    expect(!result.ok && result.message).toContain(field);
  });

  const pcmOnly = { opus: false };
  const withOpus = { opus: true };

  it('negotiates 16 kHz s16 input and the first reply format the runtime produces', () => {
    expect(negotiateAudio(audio({ output: { accept: [{ encoding: 'opus', sampleRate: 48000 }, { encoding: 'pcm_s16le', sampleRate: 44100 }, { encoding: 'pcm_s16le', sampleRate: 48000 }] } }), pcmOnly)).toEqual({
      ok: true,
      input: { encoding: 'pcm_s16le', sampleRate: 16000 },
      output: { encoding: 'pcm_s16le', sampleRate: 48000 },
      aec: true,
      gate: false,
    });
    // The kiosk's speech gate, declared: the session fills gaps only then (runtime/voice/audio-gaps.ts).
    expect(negotiateAudio(audio({ kiosk: { aec: true, gate: true } }), pcmOnly)).toMatchObject({ ok: true, gate: true });
    // `gate: false` declared is the same as none: the microphone's gaps stay unfilled (a network stall).
    expect(negotiateAudio(audio({ kiosk: { aec: true, gate: false } }), pcmOnly)).toMatchObject({ ok: true, gate: false });
    expect(negotiateAudio(audio({ input: { encoding: 'pcm_f32le', sampleRate: 16000 } }), pcmOnly)).toMatchObject({ ok: false, message: expect.stringContaining('pcm_s16le') });
    expect(negotiateAudio(audio({ input: { encoding: 'pcm_s16le', sampleRate: 48000 } }), pcmOnly)).toMatchObject({ ok: false, message: expect.stringContaining('16000') });
    expect(negotiateAudio(audio({ output: { accept: [{ encoding: 'pcm_s16le', sampleRate: 44100 }] } }), pcmOnly)).toMatchObject({ ok: false, message: expect.stringContaining('16000, 24000, 48000') });
    // Without the codec, Opus input is refused like any format the runtime cannot take.
    expect(negotiateAudio(audio({ input: { encoding: 'opus', sampleRate: 48000 } }), pcmOnly)).toMatchObject({ ok: false, message: expect.stringMatching(/^audio.input must be \{encoding: "pcm_s16le", sampleRate: 16000\}; got/) });
  });

  it('negotiates Opus each way when the kiosk offers it; PCM later in the list is the fallback', () => {
    const opusBothWays = audio({ input: { encoding: 'opus', sampleRate: 48000 }, output: { accept: [{ encoding: 'opus', sampleRate: 24000 }, { encoding: 'pcm_s16le', sampleRate: 24000 }] } });
    expect(negotiateAudio(opusBothWays, withOpus)).toEqual({ ok: true, input: { encoding: 'opus', sampleRate: 48000 }, output: { encoding: 'opus', sampleRate: 24000 }, aec: true, gate: false });
    expect(negotiateAudio(opusBothWays, pcmOnly)).toMatchObject({ ok: false });
    expect(negotiateAudio(audio({ output: { accept: [{ encoding: 'opus', sampleRate: 24000 }, { encoding: 'pcm_s16le', sampleRate: 24000 }] } }), pcmOnly)).toMatchObject({ ok: true, output: { encoding: 'pcm_s16le', sampleRate: 24000 } });
    // Opus in one direction only.
    expect(negotiateAudio(audio({ input: { encoding: 'opus', sampleRate: 16000 } }), withOpus)).toMatchObject({ ok: true, input: { encoding: 'opus', sampleRate: 16000 }, output: { encoding: 'pcm_s16le' } });
    expect(negotiateAudio(audio({ input: { encoding: 'opus', sampleRate: 44100 } }), withOpus)).toMatchObject({ ok: false, message: expect.stringContaining('"opus", sampleRate: 16000 | 24000 | 48000') });
    expect(negotiateAudio(audio({ output: { accept: [{ encoding: 'opus', sampleRate: 44100 }] } }), withOpus)).toMatchObject({ ok: false, message: expect.stringContaining('pcm_s16le or opus') });
  });

  it('refuses a turnId a reply-audio frame header cannot carry (over 255 UTF-8 bytes), on every frame that names one', () => {
    const tooLong = '€'.repeat(128); // 128 UTF-16 units, 384 UTF-8 bytes
    for (const frame of [
      { type: 'turn', turnId: tooLong, transcript: 'Bonjour' },
      { type: 'interrupt', turnId: tooLong },
      { type: 'playback.progress', turnId: tooLong, playedMs: 10 },
      { type: 'playback.done', turnId: tooLong },
    ]) {
      const result = parseClientFrame(JSON.stringify(frame));
      expect(result, frame.type).toEqual({ ok: false, code: 'invalid_frame', message: `invalid ${frame.type} frame: turnId: must be at most 255 bytes in UTF-8 (the reply-audio frame header's limit)` });
    }
    // Exactly what a header holds still passes, as do 128 ASCII characters.
    for (const turnId of ['€'.repeat(85), 'é'.repeat(127), 't'.repeat(128)]) {
      expect(parseClientFrame(JSON.stringify({ type: 'turn', turnId, transcript: 'Bonjour' })), turnId).toMatchObject({ ok: true });
    }
  });
});
