// The capture worklet imports the runtime's resampler from next to itself (the runtime serves
// machines/voice/sinc-resampler.js there, and a published build copies it in): its types are that file's.
export { SincResampler } from '../../../../machines/voice/sinc-resampler.js';
