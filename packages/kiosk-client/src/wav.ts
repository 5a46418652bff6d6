/** The one WAV layout voice mode reads and writes: RIFF, PCM (format 1), mono, signed 16-bit little-endian. */
export interface WavPcm {
  sampleRate: number;
  samples: Int16Array;
}

export class WavFormatError extends Error {}

/** Parses a RIFF/WAVE file; anything but 16-bit PCM mono (at `rate`, when given) is a WavFormatError saying what it is. */
export function readWav(bytes: Uint8Array, rate?: number): WavPcm {
  const view = new DataView(bytes.buffer, bytes.byteOffset, bytes.byteLength);
  const tag = (at: number) => String.fromCharCode(...bytes.subarray(at, at + 4));
  if (bytes.byteLength < 12 || tag(0) !== 'RIFF' || tag(8) !== 'WAVE') throw new WavFormatError('not a WAV file (no RIFF/WAVE header)');
  let format: { audioFormat: number; channels: number; sampleRate: number; bits: number } | null = null;
  for (let at = 12; at + 8 <= bytes.byteLength; ) {
    const id = tag(at);
    const size = view.getUint32(at + 4, true);
    const body = at + 8;
    if (id === 'fmt ' && size >= 16) {
      format = { audioFormat: view.getUint16(body, true), channels: view.getUint16(body + 2, true), sampleRate: view.getUint32(body + 4, true), bits: view.getUint16(body + 14, true) };
      // WAVE_FORMAT_EXTENSIBLE carries the real format in its sub-format GUID's first two bytes.
      if (format.audioFormat === 0xfffe && size >= 26) format.audioFormat = view.getUint16(body + 24, true);
    } else if (id === 'data') {
      if (!format) throw new WavFormatError('WAV has no "fmt " chunk before its data');
      const found = `${format.audioFormat === 1 ? 'PCM' : format.audioFormat === 3 ? 'float' : `format ${format.audioFormat}`} ${format.bits}-bit, ${format.channels} channel(s), ${format.sampleRate} Hz`;
      if (format.audioFormat !== 1 || format.bits !== 16 || format.channels !== 1 || (rate !== undefined && format.sampleRate !== rate)) {
        throw new WavFormatError(`WAV is ${found}; voice input must be 16-bit PCM, mono${rate === undefined ? '' : `, ${rate} Hz`}`);
      }
      const length = Math.min(size, bytes.byteLength - body) & ~1;
      const samples = new Int16Array(length / 2);
      for (let i = 0; i < samples.length; i++) samples[i] = view.getInt16(body + 2 * i, true);
      return { sampleRate: format.sampleRate, samples };
    }
    at = body + size + (size & 1);
  }
  throw new WavFormatError('WAV has no data chunk');
}

/** A 44-byte header then the samples, mono 16-bit PCM. */
export function writeWav({ sampleRate, samples }: WavPcm): Uint8Array {
  const out = new Uint8Array(44 + samples.length * 2);
  const view = new DataView(out.buffer);
  const text = (at: number, s: string) => [...s].forEach((c, i) => view.setUint8(at + i, c.charCodeAt(0)));
  text(0, 'RIFF');
  view.setUint32(4, 36 + samples.length * 2, true);
  text(8, 'WAVE');
  text(12, 'fmt ');
  view.setUint32(16, 16, true);
  view.setUint16(20, 1, true);
  view.setUint16(22, 1, true);
  view.setUint32(24, sampleRate, true);
  view.setUint32(28, sampleRate * 2, true);
  view.setUint16(32, 2, true);
  view.setUint16(34, 16, true);
  text(36, 'data');
  view.setUint32(40, samples.length * 2, true);
  for (let i = 0; i < samples.length; i++) view.setInt16(44 + 2 * i, samples[i]!, true);
  return out;
}
