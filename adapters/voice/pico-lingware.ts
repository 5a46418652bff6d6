import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';

/** Where Debian's libttspico-data (non-free) puts SVOX Pico's lingware. */
export const PICO_LINGWARE_DIR = '/usr/share/pico/lang';
/** The French voice: text analysis, then signal generation (the "nk0" speaker, the only French one). */
export const PICO_FRENCH_FILES = ['fr-FR_ta.bin', 'fr-FR_nk0_sg.bin'] as const;

/** The French lingware's two files, found in one folder. */
export interface PicoLingware {
  dir: string;
  files: readonly string[];
}

/** The French lingware in `dir`, or null when either file is missing (the package is not installed). */
export function findPicoLingware(dir: string): PicoLingware | null {
  return PICO_FRENCH_FILES.every((file) => existsSync(join(dir, file))) ? { dir, files: PICO_FRENCH_FILES } : null;
}

/** Each file's bytes, by name, for the WASM module's in-memory file system (read-only, about 1.2 MB). */
export function readPicoLingware(lingware: PicoLingware): { name: string; bytes: Uint8Array }[] {
  return lingware.files.map((name) => ({ name, bytes: readFileSync(join(lingware.dir, name)) }));
}
