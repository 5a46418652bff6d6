import type { Logger } from 'pino';
import type { SessionActor } from '../../../machines/session/session.machine.ts';
import type { SpeakerPort } from '../../../machines/voice/voice.port.ts';
import type { LineLookup } from '../reply-audio.ts';
import type { PreemptiveTurn } from './preemptive-turn.ts';
import type { PreemptiveTurns } from './preemptive-turns.ts';

/**
 * One voice session's speculative turns, by utterance: started and dropped when the turn-taking
 * machine says, the one on the final transcript handed to its turn. An ended utterance's speculation
 * waits for its transcript while the next utterance may start its own.
 */
export class SessionSpeculations {
  private readonly byUtterance = new Map<number, PreemptiveTurn>();

  private readonly o: { preemption: PreemptiveTurns; actor: SessionActor; speech: { speaker: SpeakerPort; lines: LineLookup; opus: boolean }; log: Logger };

  constructor(o: SessionSpeculations['o']) {
    this.o = o;
  }

  /**
   * Starts the turn's work on `text`; false when it is left to the real turn: CacheFlux answers it
   * itself, or the session is not between turns (a reply being written, a window being folded).
   */
  start(utterance: number, text: string): boolean {
    const { preemption, actor, speech } = this.o;
    let speculation: PreemptiveTurn | null = null;
    try {
      if (!preemption.answersAtOnce(text)) speculation = preemption.start(actor, text, speech);
    } catch (err) {
      // A head start only: the turn does its own work. The text is never logged.
      this.o.log.warn({ err }, 'preemptive turn failed to start');
    }
    if (speculation) this.byUtterance.set(utterance, speculation);
    return speculation !== null;
  }

  drop(utterance: number): void {
    this.byUtterance.get(utterance)?.abort();
    this.byUtterance.delete(utterance);
  }

  /** The utterance's speculation for its turn when `adopt` (it ran on the very transcript), else dropped. */
  take(utterance: number, adopt: boolean): PreemptiveTurn | null {
    const speculation = adopt ? (this.byUtterance.get(utterance) ?? null) : null;
    if (!speculation) this.drop(utterance);
    this.byUtterance.delete(utterance);
    return speculation;
  }

  close(): void {
    for (const speculation of this.byUtterance.values()) speculation.abort();
    this.byUtterance.clear();
  }
}
