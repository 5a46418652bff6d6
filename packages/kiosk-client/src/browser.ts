/**
 * `@kohami/kiosk-client/browser`: a browser kiosk's audio (README: « Browser »). The microphone
 * captured at the negotiated rate through an AudioWorklet (echo cancellation, noise suppression and gain
 * control asked of the browser), an optional speech gate, reply playback through a bounded jitter
 * buffer with `playback.progress`, the sentence marks and barge-in that keeps what was heard, mute,
 * and Opus both ways through WebCodecs where the browser has it (PCM otherwise).
 */
export { attachVoice } from './browser/attach.ts';
export { BrowserVoice, PROGRESS_EVERY_MS, type VoiceEvents, type VoiceFrame, type VoiceLink, type VoiceOptions, type VoiceStartAudio } from './browser/voice.ts';
export { ReplyPlayer, JITTER_BUFFER, type JitterBufferSettings, type ReplyPlayerEvents } from './browser/reply-player.ts';
export { SpeechGate, SPEECH_GATE_DEFAULTS, levelDb, type SpeechGateOptions } from './browser/speech-gate.ts';
export { Microphone, MIC_CONSTRAINTS, DEFAULT_WORKLET_URL } from './browser/microphone.ts';
export { MicOpusEncoder, ReplyOpusDecoder, OPUS_RATE, opusSupport, type OpusSupport } from './browser/opus.ts';
export { CAPTURE_PROCESSOR, FRAME_MS, PCM_INPUT_RATE } from './browser/capture-frames.ts';
