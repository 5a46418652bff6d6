import type { Logger } from 'pino';
import type { ConsentPort, MemoryPort } from '../../machines/memory/memory.port.ts';
import type { RecallOutcome, RecallPort } from '../../machines/session/ports.ts';
import { withDeadline } from '../../machines/session/deadline.ts';

/** Said when the senior has not consented to conversation memory: never silence, memory untouched. */
export const NEUTRAL_REPLY = 'Je suis là pour discuter avec vous.';
export const RECALL_LIMIT = 5;

/**
 * Flux 2. Gates on the `conversation` consent first (INV-C01), then searches the senior's
 * memory under its own budget. A slow or failing search hands the agent no facts: the
 * turn goes on, it is never blocked by memory.
 */
export class MemoryFluxAdapter implements RecallPort {
  private readonly consents: ConsentPort;
  private readonly memory: MemoryPort;
  private readonly budgetMs: number;
  private readonly logger: Pick<Logger, 'warn'>;

  constructor(
    consents: ConsentPort,
    memory: MemoryPort,
    budgetMs: number,
    logger: Pick<Logger, 'warn'>,
  ) {
    this.consents = consents;
    this.memory = memory;
    this.budgetMs = budgetMs;
    this.logger = logger;
  }

  async recall({ seniorId, transcript }: { seniorId: string; transcript: string }, signal: AbortSignal): Promise<RecallOutcome> {
    if (!(await this.consents.hasConsent(seniorId, 'conversation', signal))) return { kind: 'reply', text: NEUTRAL_REPLY, flux: 'neutral' };
    try {
      const facts = await withDeadline((budget) => this.memory.search(transcript, seniorId, RECALL_LIMIT, budget), this.budgetMs, signal);
      return { kind: 'facts', facts: facts.map(({ content, category }) => ({ content, category })) };
    } catch (err) {
      this.logger.warn({ err, seniorId }, 'recall skipped: memory search failed or exceeded its budget');
      return { kind: 'facts', facts: [] };
    }
  }
}
