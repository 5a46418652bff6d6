import { setFlagsFromString } from 'node:v8';

/**
 * After each full collection V8 sets the old generation's next limit at the live size times a
 * factor it derives from its own speed estimates. For this process (every voice session turns over
 * thousands of short-lived audio, socket and stream objects a second, a few of which survive a
 * scavenge) that factor sometimes settles near its 1.1 minimum: the old generation then fills again
 * within a few hundred ms and a mark-compact runs every few hundred ms, each pause landing on a
 * frame or a reply. Which mode a process falls into varied from run to run. Doubling the live size
 * instead costs tens of MiB of heap and keeps mark-compacts rare: bench:voice at 100 sessions, 8–47
 * mark-compacts per 10 s window without it, 1 with it (docs/benchmarks.md, bench:voice). At 3,000 text sessions
 * (bench:load) alternated runs with and without it stayed within that bench's spread (docs/benchmarks.md, bench:load).
 */
export const HEAP_GROWING_PERCENT = 100;

/** The factor is read at each limit computation, so setting it once the VM runs takes effect at the next collection. */
export function setHeapGrowth(): void {
  setFlagsFromString(`--heap-growing-percent=${HEAP_GROWING_PERCENT}`);
}
