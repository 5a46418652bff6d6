import { opusCodec } from '../../adapters/voice/opus-codec.ts';
import type { OpusCodecPort } from '../../machines/voice/voice.port.ts';

/**
 * How close a codec's output is to its input: the signal-to-noise ratio (dB) after aligning the two
 * (a codec delays its output by its lookahead, Opus by 6.5 ms plus its resampler's).
 */
export function alignedSnrDb(reference: Int16Array, decoded: Int16Array, maxLag: number): { snrDb: number; lag: number } {
  let best = { snrDb: -Infinity, lag: 0 };
  const n = Math.min(reference.length, decoded.length - maxLag);
  if (n <= 0) throw new RangeError('alignedSnrDb: the decoded audio is shorter than the lag searched');
  let signal = 0;
  for (let i = 0; i < n; i++) signal += reference[i]! * reference[i]!;
  for (let lag = 0; lag <= maxLag; lag++) {
    let noise = 0;
    for (let i = 0; i < n; i++) {
      const d = reference[i]! - decoded[i + lag]!;
      noise += d * d;
    }
    const snrDb = 10 * Math.log10(signal / Math.max(noise, 1));
    if (snrDb > best.snrDb) best = { snrDb, lag };
  }
  return best;
}

/** Speech-like audio with no TTS: a voiced harmonic source whose pitch glides, syllable-rate envelope. */
export function voicedSound(sampleRate: number, ms: number): Int16Array {
  const out = new Int16Array(Math.round((sampleRate * ms) / 1000));
  let phase = 0;
  for (let i = 0; i < out.length; i++) {
    const t = i / sampleRate;
    const f0 = 140 + 40 * Math.sin(2 * Math.PI * 2.5 * t);
    phase += (2 * Math.PI * f0) / sampleRate;
    let s = 0;
    // Harmonics to 4 kHz, shaped by two formant-like bumps.
    for (let h = 1; h * f0 < Math.min(4000, sampleRate / 2); h++) {
      const f = h * f0;
      s += (Math.exp(-(((f - 700) / 300) ** 2)) + 0.5 * Math.exp(-(((f - 1800) / 400) ** 2)) + 0.05) * Math.sin(h * phase);
    }
    const envelope = 0.55 + 0.45 * Math.sin(2 * Math.PI * 4 * t);
    out[i] = Math.round(Math.max(-1, Math.min(1, s * 0.25 * envelope)) * 20000);
  }
  return out;
}

/** The real Opus codec, with the encoders and decoders it has open (each leaves the set when closed). */
export function trackedCodec(): { codec: OpusCodecPort; open: Set<object>; counts: { encoders: number; packets: number } } {
  const real = opusCodec();
  const open = new Set<object>();
  const counts = { encoders: 0, packets: 0 };
  const track = <T extends { close(): void }>(c: T): T => {
    open.add(c);
    const close = c.close.bind(c);
    c.close = () => {
      open.delete(c);
      close();
    };
    return c;
  };
  const encoder = (rate: number) => {
    const e = track(real.encoder(rate));
    counts.encoders += 1;
    const encode = e.encode.bind(e);
    e.encode = (frame) => (counts.packets++, encode(frame));
    return e;
  };
  return { open, counts, codec: { decoder: (rate) => track(real.decoder(rate)), encoder } };
}
