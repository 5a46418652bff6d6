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
export const SUPPORT_CHECK_MS = 1000;

const encoderConfig: AudioEncoderConfig = { codec: 'opus', sampleRate: OPUS_RATE, numberOfChannels: 1, bitrate: BITRATE };
const decoderConfig: AudioDecoderConfig = { codec: 'opus', sampleRate: OPUS_RATE, numberOfChannels: 1 };

export interface OpusSupport {
  input: boolean;
  output: boolean;
}

type Checkable = { isConfigSupported(config: AudioEncoderConfig | AudioDecoderConfig): Promise<{ supported?: boolean }> };

/** Which directions this browser can do in Opus: both false without WebCodecs. */
export async function opusSupport(): Promise<OpusSupport> {
  const check = async (codec: Checkable | undefined, config: AudioEncoderConfig | AudioDecoderConfig): Promise<boolean> => {
    if (codec === undefined) return false;
    let timer: ReturnType<typeof setTimeout> | undefined;
    const late = new Promise<{ supported: false }>((resolve) => (timer = setTimeout(() => resolve({ supported: false }), SUPPORT_CHECK_MS)));
    try {
      return (await Promise.race([codec.isConfigSupported(config), late])).supported === true;
    } catch {
      return false;
    } finally {
      clearTimeout(timer);
    }
  };
  const g = globalThis as { AudioEncoder?: Checkable; AudioDecoder?: Checkable };
  const [input, output] = await Promise.all([check(g.AudioEncoder, encoderConfig), check(g.AudioDecoder, decoderConfig)]);
  return { input, output };
}

/** The microphone's encoder: `encode()` takes 20 ms of s16 at 48 kHz; `onPacket` gets each packet's bytes. */
export class MicOpusEncoder {
  private samples = 0;
  private readonly encoder: AudioEncoder;

  constructor(onPacket: (packet: ArrayBuffer) => void) {
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

  encode(frame: Int16Array): void {
    if (this.encoder.state !== 'configured') return;
    const timestamp = Math.round((this.samples / OPUS_RATE) * US_PER_S);
    this.samples += frame.length;
    const data = new AudioData({ format: 's16', sampleRate: OPUS_RATE, numberOfFrames: frame.length, numberOfChannels: 1, timestamp, data: frame as Int16Array<ArrayBuffer> });
    this.encoder.encode(data);
    data.close();
  }

  close(): void {
    if (this.encoder.state !== 'closed') this.encoder.close();
  }
}

/**
 * One reply turn's decoder. Each packet goes in with `timestamp = sampleOffset / sampleRate` (µs), so
 * what comes out says where it lies in the turn; `onPcm(sampleOffset, pcm)` gets it as Float32.
 */
export class ReplyOpusDecoder {
  readonly turnId: string;
  private readonly sampleRate: number;
  private readonly decoder: AudioDecoder;

  constructor(turnId: string, sampleRate: number, onPcm: (sampleOffset: number, pcm: Float32Array) => void) {
    this.turnId = turnId;
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

  decode(sampleOffset: number, packet: Uint8Array): void {
    if (this.decoder.state !== 'configured' || packet.length === 0) return;
    const timestamp = Math.round((sampleOffset / this.sampleRate) * US_PER_S);
    this.decoder.decode(new EncodedAudioChunk({ type: 'key', timestamp, data: packet as Uint8Array<ArrayBuffer> }));
  }

  /** Resolves once every packet given has been decoded (and handed to `onPcm`); then the decoder is freed. */
  async drain(): Promise<void> {
    if (this.decoder.state !== 'configured') return;
    try {
      await this.decoder.flush();
    } catch {
      // Closed meanwhile (the turn was cleared): nothing more to hand over.
    }
    this.close();
  }

  /** Drops what is still queued (a cleared turn, the next turn) and frees the decoder. */
  close(): void {
    if (this.decoder.state !== 'closed') this.decoder.close();
  }
}
