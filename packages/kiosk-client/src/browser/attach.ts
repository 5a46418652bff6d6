import type { KioskClient } from '../client.ts';
import type { ServerFrameType } from '../protocol.ts';
import type { BrowserVoice } from './voice.ts';

/** The frames the voice acts on: the negotiated formats, and the reply's audio. */
const VOICE_FRAMES = ['session.ready', 'reply.audio.start', 'reply.audio.mark', 'reply.audio.end', 'reply.audio.clear', 'reply.audio.pause', 'reply.audio.resume'] as const satisfies readonly ServerFrameType[];

/**
 * Wires a `BrowserVoice` to a `KioskClient` (created with `link: client`): the client's reply-audio
 * frames and binary audio go to the voice, each `session.ready` (a resume's too) sets its formats.
 * Returns what undoes it. Then `client.connect({ mode: 'voice', audio: voice.startAudio() })`.
 */
export function attachVoice(client: KioskClient, voice: BrowserVoice): () => void {
  const offs = VOICE_FRAMES.map((type) => client.on(type, (frame) => voice.frame(frame)));
  offs.push(client.on('audio', (frame) => voice.audio(frame)));
  return () => {
    for (const off of offs) off();
  };
}
