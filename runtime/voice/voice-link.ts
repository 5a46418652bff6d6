import type { KioskLink } from '../sessions/session-registry.ts';

/** A kiosk link that also carries binary reply audio (the gateway implements it over the socket). */
export interface VoiceLink extends KioskLink {
  sendAudio(bytes: Uint8Array): void;
  /** Bytes queued on the socket and not yet read by the kiosk (Infinity once it is closed). */
  readonly unreadBytes: number;
}
