import { EspeakSpeaker } from '../../adapters/voice/espeak-speaker.ts';
import { findPicoLingware, PICO_FRENCH_FILES, type PicoLingware } from '../../adapters/voice/pico-lingware.ts';
import { PicoSpeaker } from '../../adapters/voice/pico-speaker.ts';
import type { SpeakerPort } from '../../machines/voice/voice.port.ts';
import type { Config } from '../config.ts';
import { PicoWithFallback } from './pico-with-fallback.ts';

export class OfflineVoiceError extends Error {
  override name = 'OfflineVoiceError';
}

/** The offline voice the settings choose: SVOX Pico with its lingware, or espeak-ng. */
export type OfflineVoice = { engine: 'pico'; lingware: PicoLingware } | { engine: 'espeak' };

/**
 * OFFLINE_VOICE against what is installed: `auto` takes SVOX Pico when its French lingware is in
 * PICO_LINGWARE_DIR and espeak-ng otherwise (and, at run time, when Pico fails to load: PicoWithFallback); `pico` without the lingware is an OfflineVoiceError,
 * so a kiosk meant to have the better voice does not start with the other one unnoticed.
 */
export function offlineVoiceOf(config: Pick<Config, 'OFFLINE_VOICE' | 'PICO_LINGWARE_DIR'>): OfflineVoice {
  if (config.OFFLINE_VOICE === 'espeak') return { engine: 'espeak' };
  const lingware = findPicoLingware(config.PICO_LINGWARE_DIR);
  if (lingware) return { engine: 'pico', lingware };
  if (config.OFFLINE_VOICE === 'auto') return { engine: 'espeak' };
  throw new OfflineVoiceError(
    `OFFLINE_VOICE=pico but SVOX Pico's French lingware (${PICO_FRENCH_FILES.join(', ')}) is not in PICO_LINGWARE_DIR (${config.PICO_LINGWARE_DIR}): install Debian's libttspico-data (non-free), or set OFFLINE_VOICE=auto`,
  );
}

/**
 * The offline speaker: every reply without MISTRAL_API_KEY, and the fallback when Voxtral's speech
 * fails; `engine` labels its failures in kohami_speech_errors_total.
 */
export function createOfflineSpeaker(
  config: Pick<Config, 'OFFLINE_VOICE' | 'PICO_LINGWARE_DIR'>,
  onPicoFallback: (error: Error) => void = () => {},
): { speaker: SpeakerPort; engine: OfflineVoice['engine'] } {
  const voice = offlineVoiceOf(config);
  if (voice.engine === 'espeak') return { speaker: new EspeakSpeaker(), engine: 'espeak' };
  const pico = new PicoSpeaker({ lingware: voice.lingware });
  // `auto` asked for the best voice there is: espeak-ng when Pico will not load. `pico` asked for Pico: its failures show.
  return { speaker: config.OFFLINE_VOICE === 'auto' ? new PicoWithFallback(pico, onPicoFallback) : pico, engine: 'pico' };
}

/** How the start banner names the offline voice. */
export function offlineVoiceName(config: Pick<Config, 'OFFLINE_VOICE' | 'PICO_LINGWARE_DIR'>): string {
  const voice = offlineVoiceOf(config);
  return voice.engine === 'pico' ? `SVOX Pico (${voice.lingware.dir})` : 'espeak-ng';
}
