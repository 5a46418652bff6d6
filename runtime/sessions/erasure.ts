import { setTimeout as delay } from 'node:timers/promises';
import type { Logger } from 'pino';
import type { PgErasureNoticesRepository } from '../../adapters/postgres/pg-erasure-notices.repository.ts';
import type { PgErasureRepository } from '../../adapters/postgres/pg-erasure.repository.ts';
import type { PgPresenceRepository } from '../../adapters/postgres/pg-presence.repository.ts';
import { EVERY_PROCESS, type PgSignals } from '../../adapters/postgres/pg-signals.ts';
import type { MemoryPort } from '../../machines/memory/memory.port.ts';
import type { SessionRegistry } from './session-registry.ts';

/** RAM stores holding a senior's data (the semantic cache, the pre-synthesized voice lines), by name. */
export type InMemoryStores = Record<string, { invalidateSenior(seniorId: string): number }>;

/** What makes the erased rows' bytes go from the database's files and WAL, later (runtime/jobs/erasure-purge.ts). */
export interface PurgeRequests {
  request(): Promise<void>;
}

/** How the processes sharing a database tell each other of an erasure (see `RemoteErasures`). */
export interface ErasureAcrossProcesses {
  notices: PgErasureNoticesRepository;
  presence: Pick<PgPresenceRepository, 'heldElsewhere' | 'livePeers'>;
  /** Wakes the other processes' poll at once (LISTEN/NOTIFY); the notice stays the record they read. */
  signals?: Pick<PgSignals, 'send'>;
  processId: string;
  /** A process whose heartbeat is older than this is dead (presence's rule). */
  staleMs: number;
  /** ERASURE_POLL_MS: how often the other processes look for a notice while they have peers. */
  pollMs: number;
  /** How long a notice is kept: every live process reads it at least once meanwhile (at its heartbeat, at the latest). */
  retainMs: number;
  logger: Logger;
}

/**
 * RGPD erasure of one senior. First the fence (PgErasureRepository.fence): from its commit no
 * session of the senior starts in any process sharing the database, and every start already past
 * its claim is known. Then the senior's session and any start in flight close here as `erased`
 * (SessionRegistry.fence) and the in-memory stores drop the senior, here and — through a notice in
 * the database — in every other process sharing it, which the erasure waits for. Then the memory
 * stores (each reports its own count, Zep included), then every table of the schema that has a
 * `senior_id` column, then the senior row (PgErasureRepository). Last, a purge is asked for: the
 * deleted rows' bytes leave the database's files and WAL within ERASURE_PURGE_DELAY_S and two purges.
 * Idempotent: a second run returns zero counts (and asks for a purge again).
 */
export class SeniorErasure {
  private readonly tables: Pick<PgErasureRepository, 'fence' | 'eraseSenior'>;
  private readonly memoryStores: Record<string, Pick<MemoryPort, 'deleteSenior'>>;
  private readonly registry: SessionRegistry;
  private readonly inMemory: InMemoryStores;
  private readonly across: ErasureAcrossProcesses | null;
  private readonly purge: PurgeRequests | null;

  constructor(
    tables: Pick<PgErasureRepository, 'fence' | 'eraseSenior'>,
    memoryStores: Record<string, Pick<MemoryPort, 'deleteSenior'>>,
    registry: SessionRegistry,
    inMemory: InMemoryStores = {},
    across: ErasureAcrossProcesses | null = null,
    purge: PurgeRequests | null = null,
  ) {
    this.tables = tables;
    this.memoryStores = memoryStores;
    this.registry = registry;
    this.inMemory = inMemory;
    this.across = across;
    this.purge = purge;
  }

  async erase(seniorId: string): Promise<Record<string, number>> {
    // Before anything else, and in the database: a start anywhere either claimed before it (and is
    // stopped below, here or in its process) or is refused by its claim. If it fails, nothing changed.
    await this.tables.fence(seniorId);
    this.registry.fence(seniorId);
    const counts: Record<string, number> = {};
    for (const [name, store] of Object.entries(this.inMemory)) counts[name] = store.invalidateSenior(seniorId);
    // Before the stores and the sweep: the others stop answering the senior at once, and the sweep
    // (which removes their presence rows) finds the notice already there when their heartbeat looks.
    if (this.across) await this.tellOtherProcesses(this.across, seniorId);
    for (const [name, store] of Object.entries(this.memoryStores)) counts[name] = await store.deleteSenior(seniorId);
    // A store and a table may share a name (memory_facts): their counts add up.
    for (const [table, n] of Object.entries(await this.tables.eraseSenior(seniorId))) counts[table] = (counts[table] ?? 0) + n;
    // Not answered before it is queued: a failure here fails the request, and running it again (idempotent) asks again.
    await this.purge?.request();
    return counts;
  }

  /**
   * Publishes the notice (only while another process is live) and waits until no other live
   * process holds a session of the senior (a start past its claim included: it holds the row): once
   * this answers, a turn sent to that session is refused, not answered. The wait is bounded by the
   * presence rule itself: a process that beats reads the notices at its beat, before anything else,
   * and one that has not beaten for `staleMs` is dead; past `staleMs` and one poll the erasure goes on.
   */
  private async tellOtherProcesses(across: ErasureAcrossProcesses, seniorId: string): Promise<void> {
    if (!(await across.notices.publish(seniorId, across.processId, across.staleMs, across.retainMs))) return;
    // A lost signal costs only speed: the others still read the notice at their next poll.
    await across.signals?.send({ kind: 'erasure', to: EVERY_PROCESS, by: across.processId }).catch(() => {});
    const deadline = performance.now() + across.staleMs + across.pollMs;
    const step = Math.max(10, Math.floor(across.pollMs / 5));
    try {
      while (await across.presence.heldElsewhere(seniorId, across.processId, across.staleMs)) {
        if (performance.now() >= deadline) {
          across.logger.warn({ seniorId }, 'erasure: a process still holds the senior’s session past the presence bound; it closes it as erased at its next poll or heartbeat');
          return;
        }
        await delay(step);
      }
    } catch (err) {
      // The sweep below fails too if the database is gone; a failed wait alone must not stop the erasure.
      across.logger.warn({ err, seniorId }, 'erasure: could not check the other processes’ sessions');
    }
  }
}

/**
 * The other side of an erasure made through another process on the same database: its notice
 * closes this process's session of the senior as `erased` (never derived from), ends a start of the
 * senior in flight here without a session (SessionRegistry.fence), and drops the
 * senior from this process's in-memory stores.
 *
 * Notices are read when the erasing process signals one (`wake`), every `pollMs` while another
 * live process exists (the count comes from each presence heartbeat), and once at every heartbeat whatever the count — before the registry closes
 * a session missing from presence as `replaced`, so a session whose row the erasure's sweep removed
 * closes as `erased`. Polls never overlap, never throw (a failure is logged at warn, without ids
 * beyond the error's code) and stop at `stop()`.
 */
export class RemoteErasures {
  private timer: NodeJS.Timeout | null = null;
  private stopped = false;
  /** Polls chain: a heartbeat's poll runs after the one in flight, which may have read before the notice. */
  private queue: Promise<void> = Promise.resolve();
  private inFlight = 0;
  /** Notices already acted on, while they are kept in the table: at most the erasures of `retainMs`. */
  private readonly applied = new Set<string>();

  private readonly across: ErasureAcrossProcesses;
  private readonly registry: SessionRegistry;
  private readonly inMemory: InMemoryStores;

  constructor(
    across: ErasureAcrossProcesses,
    registry: SessionRegistry,
    inMemory: InMemoryStores,
  ) {
    this.across = across;
    this.registry = registry;
    this.inMemory = inMemory;
  }

  /** Presence's heartbeat: counts the live peers (the fast poll runs while there are), then reads and prunes the notices. */
  async heartbeat(): Promise<void> {
    if (this.stopped) return;
    try {
      this.follow(await this.across.presence.livePeers(this.across.processId, this.across.staleMs));
    } catch (err) {
      if (!this.stopped) this.across.logger.warn({ err }, 'erasure notices: counting the other processes failed');
    }
    await this.enqueue(true);
  }

  /** Another process has just published a notice (its signal): read now rather than at the next poll. */
  wake(): void {
    if (!this.stopped) void this.enqueue(false);
  }

  stop(): void {
    this.stopped = true;
    this.follow(0);
  }

  private follow(peers: number): void {
    if (peers > 0 && !this.timer && !this.stopped) {
      this.timer = setInterval(() => {
        // A poll still running when the next is due (a slow database) is not doubled.
        if (this.inFlight === 0) void this.enqueue(false);
      }, this.across.pollMs);
      this.timer.unref();
    } else if (peers === 0 && this.timer) {
      clearInterval(this.timer);
      this.timer = null;
    }
  }

  private enqueue(prune: boolean): Promise<void> {
    this.inFlight += 1;
    const run = this.queue.then(() => this.poll(prune)).finally(() => (this.inFlight -= 1));
    this.queue = run;
    return run;
  }

  private async poll(prune: boolean): Promise<void> {
    if (this.stopped) return;
    let notices;
    try {
      notices = await this.across.notices.recent(this.across.processId, this.across.retainMs, prune);
    } catch (err) {
      if (!this.stopped) this.across.logger.warn({ err }, 'erasure notices poll failed');
      return;
    }
    const kept = new Set<string>();
    for (const notice of notices) {
      kept.add(notice.id);
      if (this.applied.has(notice.id)) continue;
      this.applied.add(notice.id);
      const closed = this.registry.fence(notice.seniorId);
      for (const store of Object.values(this.inMemory)) store.invalidateSenior(notice.seniorId);
      if (closed) this.across.logger.info({ seniorId: notice.seniorId, by: notice.processId }, 'senior erased through another process: session closed, caches purged');
    }
    for (const id of this.applied) if (!kept.has(id)) this.applied.delete(id);
  }
}
