import type { Logger } from 'pino';
import type { PgProfilesRepository } from '../../adapters/postgres/pg-profiles.repository.ts';
import type { ConsentPort } from '../../machines/memory/memory.port.ts';
import { PAUSES_PER_SESSION_MAX, recordPauses } from '../../machines/voice/pause-profile.ts';

/**
 * Writes each voice session's mid-sentence pauses back into the senior's pause profile (the
 * profiles row), off the turn path: at most PAUSES_PER_SESSION_MAX numbers a session, one
 * transaction, only while the `conversation` consent holds at that moment (a consent revoked during
 * the session stops the write; an erased senior has neither consent nor row). Numbers only: nothing
 * here ever sees a word.
 */
export class PauseProfiles {
  private readonly pending = new Set<Promise<void>>();

  private readonly profiles: PgProfilesRepository;
  private readonly consents: ConsentPort;
  private readonly logger: Logger;

  constructor(
    profiles: PgProfilesRepository,
    consents: ConsentPort,
    logger: Logger,
  ) {
    this.profiles = profiles;
    this.consents = consents;
    this.logger = logger;
  }

  save(seniorId: string, pauses: readonly number[]): void {
    if (pauses.length === 0) return;
    const heard = pauses.slice(0, PAUSES_PER_SESSION_MAX);
    const write = (async () => {
      if (!(await this.consents.hasConsent(seniorId, 'conversation'))) return;
      await this.profiles.updatePauses(seniorId, (current) => recordPauses(current, heard));
    })().catch((err: unknown) => this.logger.warn({ err, seniorId }, 'pause profile not saved'));
    this.pending.add(write);
    void write.finally(() => this.pending.delete(write));
  }

  /** Resolves once every write started so far has finished (tests, shutdown). */
  async settled(): Promise<void> {
    await Promise.all([...this.pending]);
  }
}
