import { readFileSync } from 'node:fs';

/** A process's resident memory by kind, in MiB, from /proc/<pid>/smaps (Linux). */
export interface ResidentParts {
  rss: number;
  /** Mapped files: the node binary and shared libraries (their text pages, shared with other processes). */
  files: number;
  /** glibc malloc: the main heap (brk) and the threads' 64 MiB arenas (V8's compiler zones, Buffers, native modules). */
  malloc: number;
  /**
   * WebAssembly memories: a readable mapping followed by its guard reservation (≥ 1 GiB, no access),
   * which is how V8 lays out a 32-bit Wasm memory on 64-bit Linux.
   */
  wasm: number;
  /** The rest of the anonymous memory: V8 heaps of every isolate, Wasm code, thread stacks. */
  otherAnon: number;
}

interface Mapping {
  start: bigint;
  size: bigint;
  perms: string;
  name: string;
  rssKiB: number;
}

const GUARD_MIN = 1n << 30n;
const ARENA_SIZE = 64n << 20n;

function mappings(pid: number): Mapping[] {
  const found: Mapping[] = [];
  for (const line of readFileSync(`/proc/${pid}/smaps`, 'utf8').split('\n')) {
    const header = /^([0-9a-f]+)-([0-9a-f]+) (\S+) \S+ \S+ \S+\s*(.*)$/.exec(line);
    if (header) {
      const start = BigInt(`0x${header[1]}`);
      found.push({ start, size: BigInt(`0x${header[2]}`) - start, perms: header[3]!, name: header[4]!, rssKiB: 0 });
    } else if (line.startsWith('Rss:') && found.length > 0) found.at(-1)!.rssKiB = Number(line.split(/\s+/)[1]);
  }
  return found;
}

export function residentParts(pid: number): ResidentParts {
  const parts: ResidentParts = { rss: 0, files: 0, malloc: 0, wasm: 0, otherAnon: 0 };
  const maps = mappings(pid);
  maps.forEach((m, i) => {
    const mib = m.rssKiB / 1024;
    parts.rss += mib;
    const next = maps[i + 1];
    if (m.name === '[heap]') parts.malloc += mib;
    else if (m.name !== '' && !m.name.startsWith('[')) parts.files += mib;
    else if (m.name !== '') parts.otherAnon += mib;
    else if (next && next.start === m.start + m.size && next.perms.startsWith('---') && next.size >= GUARD_MIN) parts.wasm += mib;
    // A thread arena is a 64 MiB-aligned heap of at most 64 MiB (glibc's HEAP_MAX_SIZE), split by mprotect.
    else if (m.start % ARENA_SIZE === 0n && m.size <= ARENA_SIZE) parts.malloc += mib;
    else parts.otherAnon += mib;
  });
  return parts;
}
