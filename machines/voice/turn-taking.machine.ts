/**
 * Turn-taking: who has the floor, decided in one place. Three regions run side by side — the senior's
 * utterance (silent, speaking, paused), the reply playing over it (silent, playing, paused for a
 * noise) and the idle check-in (quiet, armed, spent). Inputs are the listener's readings, the
 * recognizer's texts and the reply's edges; outputs are commands the voice session carries out
 * (`TurnTakingCommand`, emitted). No timer of its own: the end-of-turn backstop, the preemption's
 * lead and the check-in are delayed events on the actor's clock, so a SimulatedClock drives them all.
 */
import { assign, emit, enqueueActions, or, raise, setup, stateIn, type GuardPredicate } from 'xstate';
import { clockNow } from '../session/clock.ts';
import { endpointOutcome, overReply } from './barge-in.ts';
import { endOfTurn, preemptAfterMs, turnCue } from './end-of-turn.ts';
import { isPause, PAUSES_PER_SESSION_MAX, recordPause } from './pause-profile.ts';
import type { EndedUtterance, FlushState, Heard, TurnTakingCommand, TurnTakingContext, TurnTakingEvent, TurnTakingInput, Utterance } from './turn-taking.types.ts';

export type * from './turn-taking.types.ts';

/**
 * The end-of-turn wait is counted in audio by the listener; the backstop ends it in time, for a kiosk
 * whose audio stops arriving during the pause (the wait plus a kiosk chunk's worth of slack).
 */
export const END_OF_TURN_BACKSTOP_SLACK_MS = 250;

/** The listener's silence lags the audio by up to one Silero window (32 ms) and one kiosk frame (20 ms), rounded up. */
export const SILENCE_LAG_MS = 60;

const NO_FLUSH: FlushState = { pause: -1, flushes: 0, pending: false, failed: false, holding: false, closed: false };
const NOTHING_HEARD: Heard = { speechMs: 0, paused: false, silenceMs: 0, pauses: -1, levelDb: null, sinceStartMs: 0 };

/** The flushed text is the recognizer's final one for every word said before this pause (a recheck under way leaves it standing). */
export function finalFor(flush: FlushState, pause: number): boolean {
  return flush.holding && flush.pause === pause && !flush.failed && (!flush.pending || flush.flushes > 1);
}

/** The pause's first flush settled on a text that does not close its sentence, and nothing was said since. */
function recheckDue(flush: FlushState, pause: number): boolean {
  return flush.flushes === 1 && finalFor(flush, pause) && !flush.closed;
}

function ended(u: Utterance, now: number): EndedUtterance {
  return { id: u.id, speechMs: u.heard.speechMs, endpointingMs: Math.round(now - u.lastSpeechAt), speculation: u.speculation, resumed: u.resumed };
}

/** The utterance in progress, changed (the machine's context is never mutated). */
const withUtterance = (context: TurnTakingContext, change: Partial<Utterance>): Partial<TurnTakingContext> => ({ utterance: { ...context.utterance!, ...change } });

type Event = TurnTakingEvent | { type: 'OVER_REPLY' } | { type: 'RESUME'; utterance: number };
type Guard = GuardPredicate<TurnTakingContext, Event, undefined, never>;
/** Reply audio is playing at the kiosk (a paused reply still is); read from the reply region within a transition. */
const replySounding = or([stateIn({ reply: 'playing' }), stateIn({ reply: 'paused' })]) as unknown as Guard;
const replyPaused = stateIn({ reply: 'paused' }) as unknown as Guard;

type Verdict = ReturnType<typeof overReply>;

/** What the senior's speech does to the reply playing under it (machines/voice/barge-in.ts). */
function verdict(context: TurnTakingContext): Verdict {
  const u = context.utterance;
  if (!u) return 'play';
  const { bargeInMinMs, falseInterruptionMs, aec } = context.settings;
  return overReply({ speechMs: u.heard.speechMs, sinceStartMs: u.heard.sinceStartMs, interim: u.interim, minMs: bargeInMinMs, falseInterruptionMs, aec, playing: true });
}

export const turnTakingMachine = setup({
  types: {
    context: {} as TurnTakingContext,
    events: {} as Event,
    input: {} as TurnTakingInput,
    emitted: {} as TurnTakingCommand,
  },
  delays: {
    idleCheckin: ({ context }) => context.settings.idleCheckinMs,
  },
  guards: {
    newPause: ({ context, event }) => event.type === 'HEARD' && event.heard.paused && event.heard.pauses !== context.utterance?.pause,
    speechResumed: ({ event }) => event.type === 'HEARD' && !event.heard.paused,
    currentPause: ({ context, event }) => (event.type === 'BACKSTOP' || event.type === 'LEAD') && context.utterance?.pause === event.pause && context.utterance.heard.paused,
    currentUtterance: ({ context, event }) => 'utterance' in event && typeof event.utterance === 'number' && context.utterance?.id === event.utterance,
    muting: ({ event }) => event.type === 'MUTE' && event.muted,
    cuts: ({ context }) => verdict(context) === 'cut',
    pauses: ({ context }) => verdict(context) === 'pause',
    /** Late words that are only a backchannel, from the speech that paused the reply (another's first readings are no word yet). */
    playsOn: ({ context }) => verdict(context) === 'play' && context.utterance !== null && context.pausedFor === context.utterance.id,
    pausedByIt: ({ context, event }) => event.type === 'RESUME' && context.pausedFor === event.utterance,
    silenceBegins: ({ context, event }) => event.type === 'REPLY.ENDED' && event.played && context.utterance === null && context.settings.idleCheckinMs > 0,
  },
  actions: {
    startUtterance: enqueueActions(({ context, enqueue, check, system }) => {
      const id = context.nextId;
      const utterance: Utterance = { id, interim: '', interimAtPause: '', pause: -1, heard: NOTHING_HEARD, lastSpeechAt: clockNow(system), prefetched: '', speculation: null, speculations: 0, resumed: false, flush: NO_FLUSH };
      enqueue.assign({ utterance, nextId: id + 1 });
      const playing = check(replySounding);
      enqueue.emit({ type: 'utterance.started', id, playing });
      if (!playing) enqueue.emit({ type: 'activity', state: 'user_speaking' });
    }),
    hear: assign(({ context, event, system }) => {
      if (event.type !== 'HEARD' || !context.utterance) return {};
      const u = context.utterance;
      const grew = event.heard.speechMs > u.heard.speechMs;
      return withUtterance(context, { heard: event.heard, ...(grew ? { lastSpeechAt: clockNow(system) } : {}) });
    }),
    beginPause: assign(({ context }) => withUtterance(context, { pause: context.utterance!.heard.pauses, interimAtPause: context.utterance!.interim })),
    takeInterim: assign(({ context, event }) => (event.type === 'INTERIM' && context.utterance ? withUtterance(context, { interim: event.text }) : {})),
    takeFlushed: assign(({ context, event }) => {
      if (event.type !== 'FLUSHED') return {};
      const flush = context.utterance!.flush;
      return withUtterance(context, { interim: event.text, flush: { ...flush, pending: false, closed: turnCue(event.text) === 'finished' } });
    }),
    flushFailed: assign(({ context }) => withUtterance(context, { flush: { ...context.utterance!.flush, pending: false, failed: true } })),
    flushSkipped: assign(({ context }) => {
      const flush = context.utterance!.flush;
      const flushes = flush.flushes - 1;
      return withUtterance(context, { flush: { ...flush, pending: false, holding: false, flushes, pause: flushes === 0 ? -1 : flush.pause } });
    }),
    /** While endpointing waits, the turn's work may start on the interim transcript (once per distinct text). */
    prefetch: enqueueActions(({ context, enqueue }) => {
      const u = context.utterance;
      const text = u?.interim.trim() ?? '';
      if (!u || text === '' || text === u.prefetched) return;
      enqueue.assign(withUtterance(context, { prefetched: text }));
      enqueue.emit({ type: 'prefetch', text });
    }),
    /**
     * The end-of-turn decision, taken here only: at a pause's start and whenever its text changes. The
     * listener ends the utterance once the silence reaches the answer; the backstop ends it in time if
     * the audio stops coming; the preemptive turn starts once the end is within its lead.
     */
    decide: enqueueActions(({ context, event, enqueue }) => {
      const u = context.utterance;
      if (!u?.heard.paused) return;
      const s = context.settings;
      const final = finalFor(u.flush, u.pause);
      const decision = endOfTurn({ interim: u.interim, interimSincePause: u.interim !== u.interimAtPause, final, silenceMs: u.heard.silenceMs, levelDb: u.heard.levelDb, profile: context.profile, settings: s.endOfTurn });
      // The lead asks again on the same text: the backstop its decision armed stands. Re-armed from a
      // reading that no longer moves (the audio stopped), it would be put off at every lead, for ever.
      if (event.type !== 'LEAD') {
        enqueue.cancel('backstop');
        if (!decision.end) enqueue.raise({ type: 'BACKSTOP', pause: u.pause }, { id: 'backstop', delay: decision.waitMs + END_OF_TURN_BACKSTOP_SLACK_MS });
      }
      enqueue.cancel('lead');
      const text = u.interim.trim();
      const p = s.preemption;
      if (p && u.speculation !== text) {
        if (u.speculation !== null) {
          enqueue.emit({ type: 'speculation.drop', utterance: u.id });
          enqueue.assign(withUtterance(context, { speculation: null }));
        }
        if (text !== '' && u.speculations < p.maxPerUtterance) {
          // A final text has nothing left to catch up with.
          const catchUpMs = final ? 0 : s.sttDelayMs - SILENCE_LAG_MS;
          const afterMs = preemptAfterMs(decision, u.heard.silenceMs, { leadMs: p.leadMs, catchUpMs });
          if (afterMs > 0) enqueue.raise({ type: 'LEAD', pause: u.pause }, { id: 'lead', delay: afterMs });
          else {
            enqueue.assign(withUtterance(context, { speculation: text, speculations: u.speculations + 1 }));
            enqueue.emit({ type: 'speculation.start', utterance: u.id, text });
          }
        }
      }
      enqueue.emit({ type: 'end.at', silenceMs: decision.endAtMs });
    }),
    cancelWaits: enqueueActions(({ enqueue }) => {
      enqueue.cancel('backstop');
      enqueue.cancel('lead');
    }),
    /** The audio stopped coming, or lags: the wait has passed in time. */
    endNow: emit({ type: 'end.at', silenceMs: 0 }),
    /** The early flush a short way into the pause, then at most one recheck of a text that did not close. */
    flushOrRecheck: enqueueActions(({ context, enqueue }) => {
      const u = context.utterance;
      const { earlyFlushMs, recheckMs } = context.settings;
      if (!u?.heard.paused || earlyFlushMs === 0) return;
      const { flush, pause } = u;
      const silenceMs = u.heard.silenceMs;
      const begun = (flushes: number): FlushState => ({ ...flush, pause, flushes, pending: true, holding: true });
      if (flush.pause !== pause && silenceMs >= earlyFlushMs) {
        if (flush.pending || flush.failed) return;
        enqueue.assign(withUtterance(context, { flush: begun(1) }));
        enqueue.emit({ type: 'flush', utterance: u.id, pause, first: true });
      } else if (recheckMs > 0 && silenceMs >= recheckMs && recheckDue(flush, pause)) {
        enqueue.assign(withUtterance(context, { flush: begun(flush.flushes + 1) }));
        enqueue.emit({ type: 'metric', name: 'early_flush', outcome: 'rechecked' });
        enqueue.emit({ type: 'recheck', utterance: u.id, pause });
      }
    }),
    /** A pause that speech ended: the held audio goes ahead of the new speech; one number for the senior's profile. */
    speechResumed: enqueueActions(({ context, event, enqueue }) => {
      if (event.type !== 'SPEECH.RESUMED') return;
      enqueue.cancel('backstop');
      enqueue.cancel('lead');
      const u = context.utterance;
      if (u?.flush.holding) {
        enqueue.assign(withUtterance(context, { flush: { ...u.flush, holding: false } }));
        enqueue.emit({ type: 'segment.resumed', utterance: u.id });
        enqueue.emit({ type: 'metric', name: 'early_flush', outcome: 'resumed' });
      }
      if (context.profile === null || !isPause(event.pauseMs)) return;
      const heardPauses = context.heardPauses.length < PAUSES_PER_SESSION_MAX ? [...context.heardPauses, Math.round(event.pauseMs)] : context.heardPauses;
      enqueue.assign({ profile: recordPause(context.profile, event.pauseMs), heardPauses });
    }),
    dropSpeculation: enqueueActions(({ context, enqueue }) => {
      const u = context.utterance;
      if (u?.speculation == null) return;
      enqueue.emit({ type: 'speculation.drop', utterance: u.id });
      enqueue.assign(withUtterance(context, { speculation: null }));
    }),
    speculationRefused: assign(({ context }) => withUtterance(context, { speculation: null, speculations: context.utterance!.speculations - 1 })),
    overReply: raise({ type: 'OVER_REPLY' }),
    endUtterance: enqueueActions(({ context, enqueue, check, system }) => {
      const u = context.utterance;
      if (!u) return;
      const playing = check(replySounding);
      enqueue.assign({ utterance: null });
      enqueue.emit({ type: 'utterance.ended', utterance: ended(u, clockNow(system)), playing });
      if (!playing) enqueue.emit({ type: 'activity', state: 'thinking' });
    }),
    dropUtterance: enqueueActions(({ context, enqueue }) => {
      const u = context.utterance;
      if (!u) return;
      // Dropped: a reply its speech paused plays on.
      enqueue.raise({ type: 'RESUME', utterance: u.id });
      if (u.speculation !== null) enqueue.emit({ type: 'speculation.drop', utterance: u.id });
      enqueue.assign({ utterance: null });
      enqueue.emit({ type: 'utterance.dropped' });
    }),
    /** The utterance's final transcript: a turn, or nothing when it was empty or a backchannel over the reply. */
    answer: enqueueActions(({ context, event, enqueue, check }) => {
      if (event.type !== 'FINAL') return;
      const { utterance: e, transcript } = event;
      const playing = check(replySounding);
      const outcome = transcript === '' ? 'empty' : endpointOutcome({ speechMs: e.speechMs, transcript, minMs: context.settings.bargeInMinMs, playing });
      if (outcome === 'turn') {
        if (playing) enqueue.emit({ type: 'metric', name: 'barge_in', outcome: 'interrupted' });
        enqueue.emit({ type: 'turn', transcript, utterance: e, adopt: e.speculation === transcript, interrupting: playing });
        return;
      }
      if (e.speculation !== null) enqueue.emit({ type: 'speculation.drop', utterance: e.id });
      const resumes = context.pausedFor === e.id && check(replyPaused);
      enqueue.raise({ type: 'RESUME', utterance: e.id });
      // « oui », « mmh », or too short while the reply plays: encouragement, not a turn.
      if (outcome !== 'empty' && !e.resumed && !resumes) enqueue.emit({ type: 'metric', name: 'barge_in', outcome: 'backchannel_ignored' });
      enqueue.emit({ type: 'activity', state: playing || outcome !== 'empty' ? 'speaking' : 'listening' });
    }),
    unheard: enqueueActions(({ event, enqueue }) => {
      if (event.type === 'TRANSCRIPTION.FAILED' && event.utterance.speculation !== null) enqueue.emit({ type: 'speculation.drop', utterance: event.utterance.id });
    }),
    pauseReply: enqueueActions(({ context, enqueue }) => {
      // A cough, the television, or words the recognizer has not given yet: the kiosk holds its place.
      enqueue.assign({ pausedFor: context.utterance!.id });
      enqueue.emit({ type: 'reply.pause' });
    }),
    /** Another speech with no word over the paused reply: the reply now waits for it to end. */
    holdReply: assign(({ context }) => ({ pausedFor: context.utterance!.id })),
    resumeReply: enqueueActions(({ context, enqueue }) => {
      enqueue.assign({ pausedFor: null, ...(context.utterance?.id === context.pausedFor ? withUtterance(context, { resumed: true }) : {}) });
      enqueue.emit({ type: 'reply.resume' });
      enqueue.emit({ type: 'metric', name: 'barge_in', outcome: 'false_interruption' });
    }),
    cutReply: enqueueActions(({ enqueue }) => {
      enqueue.assign({ pausedFor: null });
      enqueue.emit({ type: 'metric', name: 'barge_in', outcome: 'interrupted' });
      enqueue.emit({ type: 'reply.cut' });
      enqueue.emit({ type: 'activity', state: 'user_speaking' });
    }),
    replyEnded: enqueueActions(({ context, event, enqueue }) => {
      enqueue.assign({ pausedFor: null });
      if (event.type === 'REPLY.ENDED' && event.played) enqueue.emit({ type: 'activity', state: context.utterance ? 'user_speaking' : 'listening' });
    }),
    mute: enqueueActions(({ event, enqueue, check }) => {
      if (event.type !== 'MUTE') return;
      enqueue.assign({ muted: event.muted });
      if (event.muted) enqueue.emit({ type: 'activity', state: check(replySounding) ? 'speaking' : 'listening' });
    }),
    checkIn: emit({ type: 'checkin' }),
  },
}).createMachine({
  id: 'turnTaking',
  type: 'parallel',
  context: ({ input }) => ({ settings: input.settings, profile: input.profile, heardPauses: [], utterance: null, pausedFor: null, nextId: 1, muted: false }),
  states: {
    utterance: {
      initial: 'silent',
      states: {
        silent: {
          on: { 'SPEECH.STARTED': { target: 'speaking', actions: 'startUtterance' } },
        },
        speaking: {
          on: {
            HEARD: [{ guard: 'newPause', target: 'paused', actions: 'hear' }, { actions: ['hear', 'overReply'] }],
            INTERIM: { actions: ['takeInterim', 'overReply'] },
            // A flush answered after the senior went on: its text leads the next segment's.
            FLUSHED: { guard: 'currentUtterance', actions: ['takeFlushed', 'prefetch'] },
          },
        },
        paused: {
          entry: ['beginPause', 'prefetch', 'decide', 'flushOrRecheck', 'overReply'],
          exit: 'cancelWaits',
          on: {
            HEARD: [
              // Speech resumed and paused again within one chunk: a new pause, decided afresh.
              { guard: 'newPause', target: 'paused', reenter: true, actions: 'hear' },
              // The senior goes on: the speculative turn was not the turn.
              { guard: 'speechResumed', target: 'speaking', actions: ['hear', 'dropSpeculation', 'overReply'] },
              { actions: ['hear', 'flushOrRecheck', 'overReply'] },
            ],
            // The recognizer caught up with the words before the pause: the ending may now tell.
            INTERIM: { actions: ['takeInterim', 'prefetch', 'decide', 'overReply'] },
            FLUSHED: { guard: 'currentUtterance', actions: ['takeFlushed', 'prefetch', 'decide'] },
            BACKSTOP: { guard: 'currentPause', actions: 'endNow' },
            LEAD: { guard: 'currentPause', actions: 'decide' },
          },
        },
      },
      on: {
        'SPEECH.STOPPED': { target: '.silent', actions: 'endUtterance' },
        'SPEECH.RESUMED': { actions: 'speechResumed' },
        'FLUSH.FAILED': { guard: 'currentUtterance', actions: 'flushFailed' },
        'FLUSH.SKIPPED': { guard: 'currentUtterance', actions: 'flushSkipped' },
        'SPECULATION.REFUSED': { guard: 'currentUtterance', actions: 'speculationRefused' },
        FINAL: { actions: 'answer' },
        'TRANSCRIPTION.FAILED': { actions: 'unheard' },
        MUTE: [{ guard: 'muting', target: '.silent', actions: ['dropUtterance', 'mute'] }, { actions: 'mute' }],
      },
    },
    reply: {
      initial: 'silent',
      states: {
        silent: {
          on: { 'REPLY.PLAYING': 'playing' },
        },
        playing: {
          on: {
            OVER_REPLY: [
              { guard: 'cuts', target: 'silent', actions: 'cutReply' },
              { guard: 'pauses', target: 'paused', actions: 'pauseReply' },
            ],
          },
        },
        paused: {
          on: {
            OVER_REPLY: [
              { guard: 'cuts', target: 'silent', actions: 'cutReply' },
              // Late words that are only a backchannel: the reply plays on at once.
              { guard: 'playsOn', target: 'playing', actions: 'resumeReply' },
              { guard: 'pauses', actions: 'holdReply' },
            ],
            // The speech that paused it ended with no turn: the reply plays on from where it stopped.
            RESUME: { guard: 'pausedByIt', target: 'playing', actions: 'resumeReply' },
          },
        },
      },
      on: { 'REPLY.ENDED': { target: '.silent', actions: 'replyEnded' } },
    },
    checkin: {
      initial: 'quiet',
      states: {
        quiet: {
          on: { 'REPLY.ENDED': { guard: 'silenceBegins', target: 'armed' } },
        },
        armed: {
          after: { idleCheckin: { target: 'quiet', actions: 'checkIn' } },
          on: {
            'REPLY.ENDED': { guard: 'silenceBegins', target: 'armed', reenter: true },
            'REPLY.STARTED': 'quiet',
            MUTE: { guard: 'muting', target: 'quiet' },
          },
        },
        // The line was spoken: not again until the senior has spoken (or typed).
        spent: {},
      },
      on: {
        'SPEECH.STARTED': '.quiet',
        TYPED: '.quiet',
        'CHECKIN.SPOKEN': '.spent',
      },
    },
  },
});
