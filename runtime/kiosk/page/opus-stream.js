/**
 * Opus on the kiosk socket through WebCodecs (docs/protocol.md#opus): the microphone's 20 ms frames
 * encoded into raw Opus packets (one binary frame each), and each reply turn decoded from a fresh
 * decoder (each turn is its own Opus stream on the runtime's side). Raw packets, no container: what
 * `AudioEncoder` gives and `AudioDecoder` takes with `codec: "opus"` and no `description`.
 */

/** Opus's own rate: the browser captures at it, and the runtime decodes it straight to 16 kHz. */
export const OPUS_RATE = 48000;
/** What WebRTC sends for wideband voice; the runtime's replies use the same. */
const BITRATE = 24000;
const US_PER_S = 1e6;
/** isConfigSupported answers at once; one that does not within this is taken as a no (PCM), not waited on. */
const SUPPORT_CHECK_MS = 1000;

const encoderConfig = { codec: 'opus', sampleRate: OPUS_RATE, numberOfChannels: 1, bitrate: BITRATE };
const decoderConfig = { codec: 'opus', sampleRate: OPUS_RATE, numberOfChannels: 1 };

/** Which directions this browser can do in Opus: `{ input, output }`, both false without WebCodecs. */
export async function opusSupport() {
  const check = async (Codec, config) => {
    if (typeof Codec !== 'function') return false;
    let timer;
    const late = new Promise((resolve) => (timer = setTimeout(() => resolve({ supported: false }), SUPPORT_CHECK_MS)));
    try {
      return (await Promise.race([Codec.isConfigSupported(config), late])).supported === true;
    } catch {
      return false;
    } finally {
      clearTimeout(timer);
    }
  };
  const [input, output] = await Promise.all([check(globalThis.AudioEncoder, encoderConfig), check(globalThis.AudioDecoder, decoderConfig)]);
  return { input, output };
}

/** The microphone's encoder: `encode()` takes 20 ms of s16 at 48 kHz; `onPacket` gets each packet's bytes. */
export class MicOpusEncoder {
  /** @param {(packet: ArrayBuffer) => void} onPacket */
  constructor(onPacket) {
    this.samples = 0;
    this.encoder = new AudioEncoder({
      output: (chunk) => {
        const bytes = new ArrayBuffer(chunk.byteLength);
        chunk.copyTo(bytes);
        onPacket(bytes);
      },
      error: (err) => console.warn('opus encoder', err),
    });
    this.encoder.configure(encoderConfig);
  }

  /** @param {Int16Array} frame */
  encode(frame) {
    if (this.encoder.state !== 'configured') return;
    const timestamp = Math.round((this.samples / OPUS_RATE) * US_PER_S);
    this.samples += frame.length;
    const data = new AudioData({ format: 's16', sampleRate: OPUS_RATE, numberOfFrames: frame.length, numberOfChannels: 1, timestamp, data: frame });
    this.encoder.encode(data);
    data.close();
  }

  close() {
    if (this.encoder.state !== 'closed') this.encoder.close();
  }
}

/**
 * One reply turn's decoder. Each packet goes in with `timestamp = sampleOffset / sampleRate` (µs), so
 * what comes out says where it lies in the turn; `onPcm(sampleOffset, pcm)` gets it as Float32.
 */
export class ReplyOpusDecoder {
  /** @param {number} sampleRate @param {(sampleOffset: number, pcm: Float32Array) => void} onPcm */
  constructor(sampleRate, onPcm) {
    this.sampleRate = sampleRate;
    this.decoder = new AudioDecoder({
      output: (audio) => {
        const pcm = new Float32Array(audio.numberOfFrames);
        audio.copyTo(pcm, { planeIndex: 0, format: 'f32-planar' });
        const sampleOffset = Math.round((audio.timestamp / US_PER_S) * this.sampleRate);
        audio.close();
        onPcm(sampleOffset, pcm);
      },
      error: (err) => console.warn('opus decoder', err),
    });
    this.decoder.configure({ ...decoderConfig, sampleRate });
  }

  /** @param {number} sampleOffset @param {Uint8Array} packet */
  decode(sampleOffset, packet) {
    if (this.decoder.state !== 'configured' || packet.length === 0) return;
    const timestamp = Math.round((sampleOffset / this.sampleRate) * US_PER_S);
    this.decoder.decode(new EncodedAudioChunk({ type: 'key', timestamp, data: packet }));
  }

  /** Resolves once every packet given has been decoded (and handed to `onPcm`); then the decoder is freed. */
  async drain() {
    if (this.decoder.state !== 'configured') return;
    try {
      await this.decoder.flush();
    } catch {
      // Closed meanwhile (the turn was cleared): nothing more to hand over.
    }
    this.close();
  }

  /** Drops what is still queued (a cleared turn, the next turn) and frees the decoder. */
  close() {
    if (this.decoder.state !== 'closed') this.decoder.close();
  }
}
