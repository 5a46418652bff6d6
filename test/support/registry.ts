import { loadCacheVariations } from '../../adapters/fluxes/cache-flux.adapter.ts';
import type { PgPresenceRepository } from '../../adapters/postgres/pg-presence.repository.ts';
import { sessionMachine } from '../../machines/session/session.machine.ts';
import { createLogger } from '../../runtime/logger.ts';
import { SessionRegistry, type RegistryOptions } from '../../runtime/sessions/session-registry.ts';

/**
 * One process's session registry on a test database: the real machine and cache variations, the
 * runtime's default timings, a senior named `preferredName`, silent logs; `extra` adds or overrides options.
 */
export function testRegistry(
  presence: PgPresenceRepository,
  processId: string,
  presenceStaleMs: number,
  extra: Partial<RegistryOptions> & { preferredName?: string } = {},
): SessionRegistry {
  const { preferredName = 'Paul', ...options } = extra;
  return new SessionRegistry({
    machine: sessionMachine,
    variations: loadCacheVariations(),
    loadProfile: async () => ({ preferredName, isFreshSenior: false }),
    timing: { turnBudgetMs: 2500, sessionPauseMs: 600_000, kioskGraceMs: 30_000, agentStallMs: 1500, replyMaxMs: 15_000 },
    windowBudget: { maxMessages: 24, maxTokens: 3000 },
    logger: createLogger('silent'),
    presence,
    processId,
    presenceStaleMs,
    ...options,
  });
}
