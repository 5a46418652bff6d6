/**
 * VoiceGate over WebRTC VAD (libfvad compiled to WASM): about 0.01 ms a frame, so it runs on every
 * microphone frame and wakes the neural detector only around voiced audio. The WASM module is
 * instantiated once per process; each gate owns a small fvad instance and frame buffer in it.
 */
import createFvad, { type FvadModule } from '@echogarden/fvad-wasm';
import { INPUT_SAMPLE_RATE, type VoiceGate } from '../../machines/voice/voice.port.ts';

/**
 * libfvad aggressiveness 0–3. The gate must not miss a soft senior voice (Silero decides what is
 * speech), so it leans permissive: 1 passes quiet speech yet stays shut on silence.
 */
export const GATE_MODE = 1;
export const GATE_FRAME_MS = 20;

let module: Promise<FvadModule> | undefined;

function fvad(): Promise<FvadModule> {
  module ??= createFvad().catch((error: unknown) => {
    module = undefined;
    throw error;
  });
  return module;
}

export class WebRtcVoiceGate implements VoiceGate {
  readonly frameSamples = (INPUT_SAMPLE_RATE * GATE_FRAME_MS) / 1000;
  private handle: number;
  private readonly buffer: number;

  private readonly wasm: FvadModule;

  private constructor(wasm: FvadModule) {
    this.wasm = wasm;
    this.handle = wasm._fvad_new();
    if (this.handle === 0) throw new Error('WebRTC VAD: out of memory');
    if (wasm._fvad_set_sample_rate(this.handle, INPUT_SAMPLE_RATE) !== 0 || wasm._fvad_set_mode(this.handle, GATE_MODE) !== 0) {
      wasm._fvad_free(this.handle);
      throw new Error('WebRTC VAD: rejected its configuration');
    }
    this.buffer = wasm._malloc(this.frameSamples * 2);
  }

  static async create(): Promise<WebRtcVoiceGate> {
    return new WebRtcVoiceGate(await fvad());
  }

  isVoiced(frame: Int16Array): boolean {
    if (this.handle === 0) throw new Error('WebRTC VAD: gate used after close()');
    if (frame.length !== this.frameSamples) throw new RangeError(`WebRTC VAD: frame of ${frame.length} samples, expected ${this.frameSamples}`);
    // HEAP16 is re-read each time: the view is replaced whenever WASM memory grows.
    this.wasm.HEAP16.set(frame, this.buffer / 2);
    const verdict = this.wasm._fvad_process(this.handle, this.buffer, frame.length);
    if (verdict < 0) throw new Error('WebRTC VAD: frame rejected');
    return verdict === 1;
  }

  /** Frees the gate's WASM memory; the session calls it when it ends. */
  close(): void {
    if (this.handle === 0) return;
    this.wasm._fvad_free(this.handle);
    this.wasm._free(this.buffer);
    this.handle = 0;
  }
}
