import { readWavFile, WavFormatError } from '@kohami/kiosk-client/node';
import { EspeakSpeaker } from '../../../adapters/voice/espeak-speaker.ts';
import { hasSox, pcmOf, recordingOf, soxDecode } from '../../../adapters/voice/french-recordings.ts';
import { resample } from '../../../machines/voice/resample.ts';
import { INPUT_SAMPLE_RATE } from '../../../machines/voice/voice.port.ts';
import { ConfigError } from '../../config.ts';
import type { ProbePhrase } from './transcription-probes.ts';

/** The two phrases the transcription probes speak, and where they came from (said in the report). */
export interface ProbeSpeech {
  source: string;
  phrases: ProbePhrase[];
}

/** Two of the package's recordings, a little over 2 s each, by two different stamps. */
const RECORDED = ['plants/flowers/flower9', 'household/recyclingbox'];
/** espeak-ng's phrases, when nothing recorded is at hand. */
export const SYNTHETIC_PHRASES = ['Une fleur recouverte de gouttes de rosée.', "Une boîte où l'on met les déchets recyclables."];
/** Longest phrase accepted from a file: the probe pays for every second of it. */
const MAX_FILE_SECONDS = 15;

/**
 * The phrases: the files given (`--audio`, twice), else the recordings of `tuxpaint-stamps-default`
 * when it and sox are installed, else espeak-ng's French (the runtime's own offline voice): synthetic
 * speech is read more easily than people's, so the report says which was used.
 */
export async function probeSpeech(files: string[]): Promise<ProbeSpeech> {
  if (files.length > 0) return fromFiles(files);
  const recorded = RECORDED.map(recordingOf);
  if (recorded.every((r) => r !== null) && hasSox()) {
    return { source: 'people\'s recordings (tuxpaint-stamps-default)', phrases: recorded.map((r) => ({ pcm: pcmOf(soxDecode(r.ogg)), text: r.text })) };
  }
  const espeak = new EspeakSpeaker();
  const phrases: ProbePhrase[] = [];
  for (const text of SYNTHETIC_PHRASES) phrases.push({ pcm: await synthesize(espeak, text), text });
  return { source: 'espeak-ng (synthetic: install tuxpaint-stamps-default and sox, or give --audio, for people\'s speech)', phrases };
}

async function fromFiles(files: string[]): Promise<ProbeSpeech> {
  if (files.length !== 2) throw new ConfigError(`--audio: two files, one per phrase (got ${files.length})`);
  const phrases: ProbePhrase[] = [];
  for (const file of files) {
    let pcm: Int16Array;
    try {
      pcm = await readWavFile(file, INPUT_SAMPLE_RATE);
    } catch (err) {
      const why = err instanceof WavFormatError ? `${err.message} (16 kHz mono s16 WAV: sox IN -r 16000 -c 1 -b 16 OUT.wav)` : (err as Error).message;
      throw new ConfigError(`--audio ${file}: ${why}`);
    }
    if (pcm.length > MAX_FILE_SECONDS * INPUT_SAMPLE_RATE) throw new ConfigError(`--audio ${file}: longer than ${MAX_FILE_SECONDS} s (one short phrase is enough)`);
    phrases.push({ pcm });
  }
  return { source: `the files given (${files.join(', ')})`, phrases };
}

async function synthesize(espeak: EspeakSpeaker, text: string): Promise<Int16Array> {
  const chunks: Int16Array[] = [];
  for await (const chunk of espeak.synthesize(text, new AbortController().signal)) chunks.push(chunk);
  const pcm = new Int16Array(chunks.reduce((n, c) => n + c.length, 0));
  let at = 0;
  for (const chunk of chunks) {
    pcm.set(chunk, at);
    at += chunk.length;
  }
  return resample(pcm, espeak.sampleRate, INPUT_SAMPLE_RATE);
}
