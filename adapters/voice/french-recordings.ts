import { execFileSync } from 'node:child_process';
import { existsSync, readFileSync } from 'node:fs';
import path from 'node:path';

/**
 * People's French speech on a Debian machine: the package `tuxpaint-stamps-default` (GPL-2) holds
 * ~928 descriptions of Tux Paint's stamps recorded by people (`<stamp>_desc_fr.ogg`, the text on the
 * `fr.utf8=` line of the stamp's `.txt`). Read by bench:turns (its corpus) and by mistral:check (its
 * two probe phrases); decoded with sox. Nothing here is shipped: a machine without the package or sox
 * has no recordings.
 */
export const STAMPS = '/usr/share/tuxpaint/stamps';
export const RECORDING_SUFFIX = '_desc_fr.ogg';
export const RECORDING_RATE = 16_000;

/** A stamp's French recording and what it says. */
export interface Recording {
  /** The stamp's path under STAMPS, without the suffix. */
  stamp: string;
  text: string;
  ogg: string;
}

/** The recording of `stamp` (a path under STAMPS without the suffix), or null when it or its text is missing. */
export function recordingOf(stamp: string): Recording | null {
  const base = path.join(STAMPS, stamp);
  const ogg = `${base}${RECORDING_SUFFIX}`;
  if (!existsSync(ogg) || !existsSync(`${base}.txt`)) return null;
  const line = readFileSync(`${base}.txt`, 'utf8').split('\n').find((l) => l.startsWith('fr.utf8='));
  const text = line?.slice('fr.utf8='.length).replace(/[“”"«»()]/g, '').replace(/\s+/g, ' ').trim();
  return text ? { stamp, text, ogg } : null;
}

export function hasSox(): boolean {
  try {
    execFileSync('sox', ['--version'], { stdio: 'ignore' });
    return true;
  } catch {
    return false;
  }
}

/**
 * `file` decoded by sox to 16 kHz mono s16 (`tempo` applied, the pitch kept), as raw little-endian
 * bytes; the same bytes every time (`-R`: sox's dither is otherwise seeded anew on each run).
 */
export function soxDecode(file: string, tempo = 1): Buffer {
  return execFileSync('sox', ['-R', '-V1', file, '-r', String(RECORDING_RATE), '-c', '1', '-b', '16', '-e', 'signed-integer', '-t', 'raw', '-', ...(tempo !== 1 ? ['tempo', '-s', String(tempo)] : [])], {
    maxBuffer: 64 * 1024 * 1024,
  });
}

/** Raw s16le bytes as samples (a copy: the buffer may start at an odd offset of its pool). */
export function pcmOf(bytes: Buffer): Int16Array {
  const samples = new Int16Array(bytes.byteLength >> 1);
  new Uint8Array(samples.buffer).set(bytes.subarray(0, samples.byteLength));
  return samples;
}
