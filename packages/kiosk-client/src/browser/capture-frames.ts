/** What the capture worklet and the main thread agree on (the worklet module itself only runs on the audio thread). */

/** The processor's name, for `new AudioWorkletNode(ctx, CAPTURE_PROCESSOR, …)`. */
export const CAPTURE_PROCESSOR = 'kohami-mic-capture';
/** Each posted frame is this long: 20 ms, what WebRTC sends and the runtime's own kiosks do. */
export const FRAME_MS = 20;
/** The PCM the runtime hears from a kiosk that does not send Opus. */
export const PCM_INPUT_RATE = 16000;
