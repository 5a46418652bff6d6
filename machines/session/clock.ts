import type { ActorSystem } from 'xstate';

/** Wall-clock time, for what a turn records (its start, its latency) and when the session began and ended. */
export const now = () => Date.now();

/**
 * The time on the actor's clock, the one its delayed transitions run on: a SimulatedClock (tests)
 * has `now()`; XState's default clock is the real timers, read with Date.now().
 */
export function clockNow(system: Pick<ActorSystem<never>, '_clock'>): number {
  const clock: ActorSystem<never>['_clock'] & { now?: () => number } = system._clock;
  return clock.now ? clock.now() : Date.now();
}

/** What is left of a bound counted from `since` (the latest turn, the latest chunk): one timer per period, not per event. */
export function timeLeft(since: number, boundMs: number, system: Pick<ActorSystem<never>, '_clock'>): number {
  return Math.max(0, since + boundMs - clockNow(system));
}
