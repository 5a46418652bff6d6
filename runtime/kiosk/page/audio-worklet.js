/* global registerProcessor, AudioWorkletProcessor, sampleRate */
/**
 * Microphone capture on the audio thread: mono, resampled to 16 kHz when the context runs at another
 * rate (Firefox refuses a 16 kHz context fed by a 48 kHz microphone), cut into 20 ms frames of s16le
 * and posted to the page, which sends each as one binary WebSocket frame.
 *
 * The resampler is the server's own (machines/voice/sinc-resampler.js, served next to this file): a
 * windowed-sinc low-pass, so what is above 8 kHz is removed instead of folding back into the speech
 * band the recognizer hears.
 */
import { SincResampler } from './sinc-resampler.js';

const TARGET_RATE = 16000;
const FRAME_SAMPLES = 320; // 20 ms at 16 kHz
/** A render quantum is 128 frames; the scratch buffer grows to the resampler's bound in the first quanta, then stays. */
const QUANTUM = 128;

class MicCapture extends AudioWorkletProcessor {
  constructor() {
    super();
    this.resampler = sampleRate === TARGET_RATE ? null : new SincResampler(sampleRate, TARGET_RATE);
    // Nothing is allocated per render quantum on the audio thread but the posted frames.
    this.scratch = new Float32Array(this.resampler ? this.resampler.maxOutput(QUANTUM) : 0);
    this.frame = new Int16Array(FRAME_SAMPLES);
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
    if (this.filled < FRAME_SAMPLES) return;
    this.port.postMessage(this.frame.buffer, [this.frame.buffer]);
    this.frame = new Int16Array(FRAME_SAMPLES);
    this.filled = 0;
  }
}

registerProcessor('mic-capture', MicCapture);
