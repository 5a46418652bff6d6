/**
 * Microphone capture on the audio thread (an AudioWorklet module, loaded by microphone.ts): mono,
 * resampled to the negotiated rate when the context runs at another one (Firefox refuses a 16 kHz
 * context fed by a 48 kHz microphone), cut into 20 ms frames of s16le posted to the main thread.
 *
 * The resampler is the runtime's own (machines/voice/sinc-resampler.js, served next to this module as
 * ./sinc-resampler.js): a windowed-sinc low-pass, so what is above the target's Nyquist is removed
 * instead of folding back into the speech band the recognizer hears.
 */
import { CAPTURE_PROCESSOR, FRAME_MS, PCM_INPUT_RATE } from './capture-frames.ts';
import { SincResampler } from './sinc-resampler.js';

// The AudioWorkletGlobalScope, which TypeScript's DOM library does not describe.
declare const sampleRate: number;
declare function registerProcessor(name: string, processor: unknown): void;
declare class AudioWorkletProcessor {
  readonly port: MessagePort;
}

/** A render quantum is 128 frames; the scratch buffer grows to the resampler's bound in the first quanta, then stays. */
const QUANTUM = 128;

class MicCapture extends AudioWorkletProcessor {
  private readonly frameSamples: number;
  private readonly resampler: SincResampler | null;
  private scratch: Float32Array;
  private frame: Int16Array;
  private filled = 0;

  constructor(options?: { processorOptions?: { rate?: number } }) {
    super();
    const rate = options?.processorOptions?.rate ?? PCM_INPUT_RATE;
    this.frameSamples = (rate * FRAME_MS) / 1000;
    this.resampler = sampleRate === rate ? null : new SincResampler(sampleRate, rate);
    // Nothing is allocated per render quantum on the audio thread but the posted frames.
    this.scratch = new Float32Array(this.resampler ? this.resampler.maxOutput(QUANTUM) : 0);
    this.frame = new Int16Array(this.frameSamples);
  }

  process(inputs: Float32Array[][]): boolean {
    const channel = inputs[0]?.[0];
    if (!channel) return true;
    if (!this.resampler) {
      for (let i = 0; i < channel.length; i++) this.emit(channel[i]!);
      return true;
    }
    const room = this.resampler.maxOutput(channel.length);
    if (this.scratch.length < room) this.scratch = new Float32Array(room);
    const count = this.resampler.process(channel, this.scratch);
    for (let i = 0; i < count; i++) this.emit(this.scratch[i]!);
    return true;
  }

  private emit(sample: number): void {
    const s = Math.max(-1, Math.min(1, sample));
    this.frame[this.filled++] = s < 0 ? s * 0x8000 : s * 0x7fff;
    if (this.filled < this.frameSamples) return;
    this.port.postMessage(this.frame.buffer, [this.frame.buffer]);
    this.frame = new Int16Array(this.frameSamples);
    this.filled = 0;
  }
}

registerProcessor(CAPTURE_PROCESSOR, MicCapture);
