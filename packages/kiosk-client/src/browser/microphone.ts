import { CAPTURE_PROCESSOR } from './capture-frames.ts';

/**
 * The microphone: `getUserMedia` asking for the browser's echo cancellation, noise suppression and
 * gain control (a kiosk's speaker is next to its microphone), then an AudioWorklet that posts 20 ms
 * s16 frames at the negotiated rate. The stream is opened first (session.start says whether echo is
 * cancelled), the capture graph once the rate is known (session.ready).
 */

/** The worklet module, next to this one: `.ts` where the runtime serves the package's source, `.js` in a build. */
export const DEFAULT_WORKLET_URL = new URL(import.meta.url.endsWith('.ts') ? './capture-worklet.ts' : './capture-worklet.js', import.meta.url);

export const MIC_CONSTRAINTS: MediaTrackConstraints = { channelCount: 1, echoCancellation: true, noiseSuppression: true, autoGainControl: true };

export class Microphone {
  readonly stream: MediaStream;
  private ctx: AudioContext | null = null;
  private node: AudioWorkletNode | null = null;

  private constructor(stream: MediaStream) {
    this.stream = stream;
  }

  /** Asks for the microphone (the browser may prompt); rejects when there is none or it is refused. */
  static async open(): Promise<Microphone> {
    return new Microphone(await navigator.mediaDevices.getUserMedia({ audio: MIC_CONSTRAINTS }));
  }

  /** Whether the browser actually cancels the echo (what it granted, not what was asked). */
  get echoCancelled(): boolean {
    return this.stream.getAudioTracks()[0]?.getSettings().echoCancellation === true;
  }

  /** The context's rate, once capturing: the negotiated one, or the device's where the browser refused it. */
  get contextRate(): number | null {
    return this.ctx ? this.ctx.sampleRate : null;
  }

  /**
   * Starts posting `rate` Hz frames to `onFrame`. A context at `rate` where the browser allows it (no
   * resampling on the audio thread); else one at the device's rate and the worklet resamples.
   */
  async capture(rate: number, onFrame: (frame: Int16Array) => void, workletUrl: URL | string = DEFAULT_WORKLET_URL): Promise<void> {
    this.stopCapture();
    let ctx: AudioContext | undefined;
    let source: MediaStreamAudioSourceNode;
    try {
      ctx = new AudioContext({ sampleRate: rate });
      source = ctx.createMediaStreamSource(this.stream);
    } catch {
      // Firefox refuses a microphone in a context at another rate than the device's.
      await ctx?.close();
      ctx = new AudioContext();
      source = ctx.createMediaStreamSource(this.stream);
    }
    this.ctx = ctx;
    await ctx.audioWorklet.addModule(workletUrl);
    if (this.ctx !== ctx) return;
    const node = new AudioWorkletNode(ctx, CAPTURE_PROCESSOR, {
      numberOfInputs: 1, numberOfOutputs: 0, channelCount: 1, channelCountMode: 'explicit', processorOptions: { rate },
    });
    node.port.onmessage = (e: MessageEvent<ArrayBuffer>) => onFrame(new Int16Array(e.data));
    source.connect(node);
    this.node = node;
  }

  stopCapture(): void {
    if (this.node) this.node.port.onmessage = null;
    this.node = null;
    void this.ctx?.close();
    this.ctx = null;
  }

  close(): void {
    this.stopCapture();
    for (const track of this.stream.getTracks()) track.stop();
  }
}
