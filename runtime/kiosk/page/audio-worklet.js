/* global registerProcessor, AudioWorkletProcessor, sampleRate */
/**
 * Microphone capture on the audio thread: mono, resampled to the negotiated rate when the context runs
 * at another one (Firefox refuses a 16 kHz context fed by a 48 kHz microphone), cut into 20 ms frames of
 * s16le and posted to the page, which sends each as one binary WebSocket frame (PCM at 16 kHz) or
 * encodes it into one Opus packet (48 kHz, `processorOptions.rate`).
 *
 * The resampler is the server's own (machines/voice/sinc-resampler.js, served next to this file): a
 * windowed-sinc low-pass, so what is above 8 kHz is removed instead of folding back into the speech
 * band the recognizer hears.
 */
import { SincResampler } from './sinc-resampler.js';

/** The rate the page sends PCM at; Opus capture asks for 48 kHz instead. */
const DEFAULT_RATE = 16000;
const FRAME_MS = 20;
/** A render quantum is 128 frames; the scratch buffer grows to the resampler's bound in the first quanta, then stays. */
const QUANTUM = 128;

class MicCapture extends AudioWorkletProcessor {
  constructor(options) {
    super();
    const rate = options?.processorOptions?.rate ?? DEFAULT_RATE;
    this.frameSamples = (rate * FRAME_MS) / 1000;
    this.resampler = sampleRate === rate ? null : new SincResampler(sampleRate, rate);
    // Nothing is allocated per render quantum on the audio thread but the posted frames.
    this.scratch = new Float32Array(this.resampler ? this.resampler.maxOutput(QUANTUM) : 0);
    this.frame = new Int16Array(this.frameSamples);
    this.filled = 0;
  }

  process(inputs) {
    const channel = inputs[0] && inputs[0][0];
    if (!channel) return true;
    if (!this.resampler) {
      for (let i = 0; i < channel.length; i++) this.emit(channel[i]);
      return true;
    }
    const room = this.resampler.maxOutput(channel.length);
    if (this.scratch.length < room) this.scratch = new Float32Array(room);
    const count = this.resampler.process(channel, this.scratch);
    for (let i = 0; i < count; i++) this.emit(this.scratch[i]);
    return true;
  }

  emit(sample) {
    const s = Math.max(-1, Math.min(1, sample));
    this.frame[this.filled++] = s < 0 ? s * 0x8000 : s * 0x7fff;
    if (this.filled < this.frameSamples) return;
    this.port.postMessage(this.frame.buffer, [this.frame.buffer]);
    this.frame = new Int16Array(this.frameSamples);
    this.filled = 0;
  }
}

registerProcessor('mic-capture', MicCapture);
