// The capture worklet imports the runtime's own resampler from next to itself: the runtime serves
// machines/voice/sinc-resampler.js there, and the package's build copies it in. Its interface:
/** A windowed-sinc low-pass resampler (plain JavaScript, no dependency). */
export declare class SincResampler {
  constructor(fromRate: number, toRate: number);
  reset(): void;
  /** The most samples `process` may write for an input of this length. */
  maxOutput(inputLength: number): number;
  /** Resamples `input` into `output`; returns how many samples were written. */
  process(input: ArrayLike<number>, output: Float32Array | Float64Array): number;
  maxFlush(): number;
  flush(output: Float32Array | Float64Array): number;
}
