/** `@kohami/kiosk-client`: the kiosk protocol's client, for any platform with a WebSocket (browsers, Node 24). */
export { KioskClient, DEFAULT_BOUNDS, MAX_PENDING_TURNS, type KioskClientOptions, type KioskClientEvents, type ClientState, type ClosedEvent, type StartOptions } from './client.ts';
export { KioskError, type KioskErrorCode, type KioskErrorDetails } from './errors.ts';
export { DEFAULT_BACKOFF, backoffDelayMs, type BackoffOptions } from './backoff.ts';
export { AUDIO_FRAME_VERSION, decodeAudioFrame, encodeAudioFrame, pcmFromBytes, pcmToBytes, type AudioFrame, type DecodedAudioFrame } from './audio-frame.ts';
export { parseServerFrame, SERVER_FRAME_TYPES, type ParsedFrame } from './parse-frame.ts';
export { queryTokenSocket, type SocketFactory, type SocketLike } from './socket.ts';
export { transcriptProblem, turnIdProblem } from './turns.ts';
export type * from './protocol.ts';
export { MAX_TRANSCRIPT_CHARS, MAX_TURN_ID_BYTES, MAX_TURN_ID_CHARS, SERVICE_RESTART } from './protocol.ts';
