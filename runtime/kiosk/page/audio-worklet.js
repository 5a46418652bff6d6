/* global registerProcessor, AudioWorkletProcessor, sampleRate */
/**
 * Microphone capture on the audio thread: mono, resampled to 16 kHz when the context runs at another
 * rate (Firefox refuses a 16 kHz context fed by a 48 kHz microphone), cut into 20 ms frames of s16le
 * and posted to the page, which sends each as one binary WebSocket frame.
 */
const TARGET_RATE = 16000;
const FRAME_SAMPLES = 320; // 20 ms at 16 kHz

class MicCapture extends AudioWorkletProcessor {
  constructor() {
    super();
    this.step = sampleRate / TARGET_RATE; // input samples per output sample
    this.position = 0; // fractional read position into the pending input
    this.pending = new Float32Array(0);
    this.frame = new Int16Array(FRAME_SAMPLES);
    this.filled = 0;
  }

  process(inputs) {
    const channel = inputs[0] && inputs[0][0];
    if (!channel) return true;
    if (this.step === 1) {
      for (let i = 0; i < channel.length; i++) this.emit(channel[i]);
      return true;
    }
    const input = new Float32Array(this.pending.length + channel.length);
    input.set(this.pending);
    input.set(channel, this.pending.length);
    // Each output sample averages the input span it covers: a box filter, enough against aliasing for speech.
    while (this.position + this.step <= input.length) {
      const from = Math.floor(this.position);
      const to = Math.floor(this.position + this.step);
      let sum = 0;
      for (let i = from; i < to; i++) sum += input[i];
      this.emit(to > from ? sum / (to - from) : input[from]);
      this.position += this.step;
    }
    const kept = Math.floor(this.position);
    this.pending = input.slice(kept);
    this.position -= kept;
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
