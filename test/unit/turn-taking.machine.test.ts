/**
 * The turn-taking machine (machines/voice/turn-taking.machine.ts), rule by rule: the decisions the voice
 * session took before it (its end-of-turn decision, early flush, preemptive turn, barge-in, idle
 * check-in, mute and pause profile), driven by the events the listener, the recognizer and the reply
 * send, on a SimulatedClock. Every bound comes from the runtime's real defaults.
 */
import { describe, expect, it } from 'vitest';
import { createActor, SimulatedClock } from 'xstate';
import { VOXTRAL_STREAMING_DELAY_MS } from '../../adapters/voice/transcription-settings.ts';
import { endOfTurn, preemptAfterMs, sensedWaits, type EndOfTurnSettings } from '../../machines/voice/end-of-turn.ts';
import { EMPTY_PAUSE_PROFILE, PAUSE_FLOOR_MS, PAUSES_PER_SESSION_MAX, recordPause, recordPauses, type PauseProfile } from '../../machines/voice/pause-profile.ts';
import {
  END_OF_TURN_BACKSTOP_SLACK_MS,
  SILENCE_LAG_MS,
  turnTakingMachine,
  type EndedUtterance,
  type Heard,
  type TurnTakingCommand,
  type TurnTakingEvent,
  type TurnTakingSettings,
} from '../../machines/voice/turn-taking.machine.ts';
import { loadConfig, type Config } from '../../runtime/config.ts';
import { SPECULATIONS_PER_UTTERANCE } from '../../runtime/voice/preemption/preemptive-turns.ts';

const config = loadConfig({});

function endOfTurnSettings(c: Config): EndOfTurnSettings {
  return { minMs: c.ENDPOINT_MIN_MS, silenceMs: c.ENDPOINT_SILENCE_MS, unfinishedMs: c.ENDPOINT_UNFINISHED_MS, maxMs: c.ENDPOINT_MAX_MS };
}

/** The settings the voice session gives the machine, from a configuration (runtime/voice/voice-services.ts). */
function settingsOf(c: Config, change: Partial<TurnTakingSettings> = {}): TurnTakingSettings {
  return {
    endOfTurn: endOfTurnSettings(c),
    earlyFlushMs: c.STT_EARLY_FLUSH_MS,
    recheckMs: c.STT_RECHECK_MS,
    sttDelayMs: c.STT_STREAMING_DELAY_MS ?? VOXTRAL_STREAMING_DELAY_MS,
    bargeInMinMs: c.BARGE_IN_MIN_MS,
    falseInterruptionMs: c.FALSE_INTERRUPTION_MS,
    idleCheckinMs: c.IDLE_CHECKIN_MS,
    aec: true,
    preemption: c.PREEMPTIVE_TURN === 'on' ? { leadMs: c.PREEMPTIVE_LEAD_MS, maxPerUtterance: SPECULATIONS_PER_UTTERANCE } : null,
    ...change,
  };
}

const S = settingsOf(config);
const EOT = S.endOfTurn;
/** Silence the recognizer needs before its words have caught up with the audio (a text not final). */
const CATCH_UP_MS = S.sttDelayMs - SILENCE_LAG_MS;
/** The settings of a test of one rule: the others' early flush and preemption are off unless it asks. */
const ALONE: Partial<TurnTakingSettings> = { earlyFlushMs: 0, preemption: null };

const UNFINISHED = 'Hier je suis allée chez le';
const NO_CUE = 'Je regarde la télévision';
const FINISHED = 'Je vais très bien.';
const WORDS = 'Attendez, je voulais vous dire autre chose';

type Command<T extends TurnTakingCommand['type']> = Extract<TurnTakingCommand, { type: T }>;

/** The machine on a simulated clock, its commands collected, and the listener's readings kept between events. */
function turnTaking(change: Partial<TurnTakingSettings> = {}, profile: PauseProfile | null = null, c: Config = config) {
  const clock = new SimulatedClock();
  const settings = settingsOf(c, change);
  const actor = createActor(turnTakingMachine, { clock, input: { settings, profile } });
  const commands: TurnTakingCommand[] = [];
  actor.on('*', (command) => commands.push(command));
  actor.start();
  let heard: Heard = { speechMs: 0, paused: false, silenceMs: 0, pauses: 0, levelDb: null, sinceStartMs: 0 };
  const send = (event: TurnTakingEvent) => actor.send(event);
  const hear = (next: Partial<Heard>) => {
    heard = { ...heard, ...next };
    send({ type: 'HEARD', heard });
  };
  const t = {
    actor,
    clock,
    settings,
    commands,
    send,
    hear,
    get heard() {
      return heard;
    },
    /** Commands of one type, in order. */
    of<T extends TurnTakingCommand['type']>(type: T): Array<Command<T>> {
      return commands.filter((command): command is Command<T> => command.type === type);
    },
    metrics: (name: 'barge_in' | 'early_flush') => commands.filter((command) => command.type === 'metric' && command.name === name).map((command) => (command as Command<'metric'>).outcome),
    /** The commands so far, forgotten. */
    take(): TurnTakingCommand[] {
      return commands.splice(0);
    },
    /** Speech starts and is confirmed (`speechMs` of it), with `interim` transcribed (if any). */
    speak(speechMs: number, interim?: string) {
      heard = { speechMs: 0, paused: false, silenceMs: 0, pauses: 0, levelDb: null, sinceStartMs: 0 };
      send({ type: 'SPEECH.STARTED' });
      hear({ speechMs, sinceStartMs: speechMs });
      if (interim !== undefined) send({ type: 'INTERIM', text: interim });
    },
    /** A new pause, `silenceMs` into it. */
    pause(silenceMs = 20, levelDb: number | null = null) {
      hear({ paused: true, pauses: heard.pauses + 1, silenceMs, levelDb });
    },
    /** The listener's reading after `ms` more of the pause's audio, then the time it took. */
    listen(ms: number) {
      hear({ silenceMs: heard.silenceMs + ms, sinceStartMs: heard.sinceStartMs + ms });
      clock.increment(ms);
    },
    /** The senior goes on after the pause. */
    resume(moreSpeechMs = 200) {
      send({ type: 'SPEECH.RESUMED', pauseMs: heard.silenceMs });
      hear({ paused: false, silenceMs: 0, speechMs: heard.speechMs + moreSpeechMs, sinceStartMs: heard.sinceStartMs + moreSpeechMs });
    },
    /** Speech stopped: the utterance handed to the transcription. */
    stop(): EndedUtterance {
      send({ type: 'SPEECH.STOPPED' });
      const ended = t.of('utterance.ended').at(-1);
      expect(ended).toBeDefined();
      return ended!.utterance;
    },
    /** Speech stopped and its final transcript came. */
    final(transcript: string) {
      const utterance = t.stop();
      send({ type: 'FINAL', utterance, transcript });
      return utterance;
    },
    utterance: () => actor.getSnapshot().context.utterance,
    endAt: () => t.of('end.at').map((command) => command.silenceMs),
  };
  return t;
}

/** What endOfTurn() decides for the same reading (the machine must hand the listener the same). */
function expected(o: { interim: string; interimSincePause: boolean; final?: boolean; silenceMs: number; levelDb?: number | null; profile?: PauseProfile | null }) {
  return endOfTurn({ interim: o.interim, interimSincePause: o.interimSincePause, final: o.final ?? false, silenceMs: o.silenceMs, levelDb: o.levelDb ?? null, profile: o.profile ?? null, settings: EOT });
}

describe('the settings come from the runtime defaults', () => {
  it('has the order the rules below rely on', () => {
    expect(EOT.minMs).toBeLessThan(EOT.silenceMs);
    expect(EOT.silenceMs).toBeLessThan(EOT.unfinishedMs);
    expect(S.earlyFlushMs).toBeGreaterThan(0);
    expect(S.recheckMs).toBeGreaterThan(S.earlyFlushMs);
    expect(S.preemption).not.toBeNull();
    expect(S.idleCheckinMs).toBe(0);
  });
});

describe('the end-of-turn decision: a pause ends at the wait its ending calls for, re-decided as its text changes', () => {
  it('an unfinished ending waits ENDPOINT_UNFINISHED_MS, believed at once', () => {
    const t = turnTaking(ALONE);
    t.speak(1200, UNFINISHED);
    t.pause(20);
    expect(t.endAt()).toEqual([expected({ interim: UNFINISHED, interimSincePause: false, silenceMs: 20 }).endAtMs]);
    expect(t.endAt()).toEqual([EOT.unfinishedMs]);
  });

  it('no cue waits ENDPOINT_SILENCE_MS', () => {
    const t = turnTaking(ALONE);
    t.speak(1200, NO_CUE);
    t.pause(20);
    expect(t.endAt()).toEqual([expected({ interim: NO_CUE, interimSincePause: false, silenceMs: 20 }).endAtMs]);
    expect(t.endAt()).toEqual([EOT.silenceMs]);
  });

  it('a finished text seen at the pause’s start is not believed (the recognizer lags): no-cue wait until the interim changes, then ENDPOINT_MIN_MS', () => {
    const t = turnTaking(ALONE);
    t.speak(1200, FINISHED);
    t.pause(20);
    expect(t.endAt()).toEqual([expected({ interim: FINISHED, interimSincePause: false, silenceMs: 20 }).endAtMs]);
    expect(t.endAt()).toEqual([EOT.silenceMs]);
    // The same text again is no change.
    t.send({ type: 'INTERIM', text: FINISHED });
    expect(t.endAt()).toEqual([EOT.silenceMs, EOT.silenceMs]);
    const text = 'Je vais très bien, merci.';
    t.send({ type: 'INTERIM', text });
    expect(t.endAt().at(-1)).toBe(expected({ interim: text, interimSincePause: true, silenceMs: 20 }).endAtMs);
    expect(t.endAt().at(-1)).toBe(EOT.minMs);
  });

  it('re-decides whenever the interim changes during the pause', () => {
    const t = turnTaking(ALONE);
    t.speak(1200, 'Je voudrais');
    t.pause(20);
    t.listen(100);
    t.send({ type: 'INTERIM', text: 'Je voudrais du pain et' });
    t.listen(100);
    t.send({ type: 'INTERIM', text: 'Je voudrais du pain et du beurre.' });
    expect(t.endAt()).toEqual([EOT.unfinishedMs, EOT.unfinishedMs, EOT.minMs]);
  });

  it('a falling level with no text cue waits halfway to ENDPOINT_MIN_MS, once the interim changed during the pause', () => {
    const t = turnTaking(ALONE);
    t.speak(1200);
    t.pause(20, -9);
    t.send({ type: 'INTERIM', text: NO_CUE });
    const falling = expected({ interim: NO_CUE, interimSincePause: true, silenceMs: 20, levelDb: -9 });
    expect(falling.cue).toBe('falling');
    expect(t.endAt()).toEqual([EOT.silenceMs, falling.endAtMs]);
    expect(falling.endAtMs).toBe(sensedWaits(null, EOT).fallingMs);
  });

  it('a decision the silence has already passed ends now (end.at below the silence) and arms no backstop', () => {
    const t = turnTaking(ALONE);
    t.speak(1200, 'Je vais très bien');
    t.pause(20);
    t.listen(EOT.minMs + 100);
    t.send({ type: 'INTERIM', text: FINISHED });
    const decision = expected({ interim: FINISHED, interimSincePause: true, silenceMs: 20 + EOT.minMs + 100 });
    expect(decision.end).toBe(true);
    expect(t.endAt().at(-1)).toBe(EOT.minMs);
    const before = t.endAt().length;
    t.clock.increment(10 * EOT.maxMs);
    expect(t.endAt()).toHaveLength(before);
  });

  it('with the senior’s pause profile (enough pauses), the waits follow it as endOfTurn() says', () => {
    const profile = recordPauses(EMPTY_PAUSE_PROFILE, Array.from({ length: 20 }, () => 2400));
    const t = turnTaking(ALONE, profile);
    t.speak(1200, NO_CUE);
    t.pause(20);
    const decision = expected({ interim: NO_CUE, interimSincePause: false, silenceMs: 20, profile });
    expect(decision.endAtMs).not.toBe(EOT.silenceMs);
    expect(t.endAt()).toEqual([decision.endAtMs]);
  });

  it('a second pause is decided afresh, its own start its reference', () => {
    const t = turnTaking(ALONE);
    t.speak(1200, FINISHED);
    t.pause(20);
    t.send({ type: 'INTERIM', text: 'Je vais très bien. Et vous' });
    t.resume();
    t.send({ type: 'INTERIM', text: 'Je vais très bien. Et vous ?' });
    t.pause(20);
    // Seen at the pause's start: not believed yet.
    expect(t.endAt()).toEqual([EOT.silenceMs, EOT.silenceMs, EOT.silenceMs]);
  });

  it('prefetches the interim at the pause and on each new text during it, never the same text twice', () => {
    const t = turnTaking(ALONE);
    t.speak(1200, 'Je voudrais');
    expect(t.of('prefetch')).toEqual([]);
    t.pause(20);
    t.send({ type: 'INTERIM', text: 'Je voudrais ' });
    t.send({ type: 'INTERIM', text: 'Je voudrais du pain' });
    expect(t.of('prefetch').map((c) => c.text)).toEqual(['Je voudrais', 'Je voudrais du pain']);
  });
});

describe('the backstop: the wait ends in time when the audio stops coming', () => {
  it('with no further reading, end.at 0 comes waitMs + END_OF_TURN_BACKSTOP_SLACK_MS after the decision, not one ms before', () => {
    const t = turnTaking(ALONE);
    t.speak(1200, NO_CUE);
    t.pause(20);
    const { waitMs } = expected({ interim: NO_CUE, interimSincePause: false, silenceMs: 20 });
    t.clock.increment(waitMs + END_OF_TURN_BACKSTOP_SLACK_MS - 1);
    expect(t.endAt()).toEqual([EOT.silenceMs]);
    t.clock.increment(1);
    expect(t.endAt()).toEqual([EOT.silenceMs, 0]);
  });

  it('a resumed pause cancels it: SPEECH.RESUMED', () => {
    const t = turnTaking(ALONE);
    t.speak(1200, NO_CUE);
    t.pause(20);
    t.send({ type: 'SPEECH.RESUMED', pauseMs: 300 });
    t.clock.increment(10 * EOT.maxMs);
    expect(t.endAt()).not.toContain(0);
  });

  it('a resumed pause cancels it: a reading no longer paused', () => {
    const t = turnTaking(ALONE);
    t.speak(1200, NO_CUE);
    t.pause(20);
    t.hear({ paused: false, silenceMs: 0, speechMs: 1400 });
    t.clock.increment(10 * EOT.maxMs);
    expect(t.endAt()).not.toContain(0);
  });

  it('a new decision re-arms it from the decision, with the new wait', () => {
    const t = turnTaking(ALONE);
    t.speak(1200, NO_CUE);
    t.pause(20);
    t.clock.increment(1000);
    t.send({ type: 'INTERIM', text: UNFINISHED });
    const { waitMs } = expected({ interim: UNFINISHED, interimSincePause: true, silenceMs: 20 });
    t.clock.increment(waitMs + END_OF_TURN_BACKSTOP_SLACK_MS - 1);
    expect(t.endAt()).toEqual([EOT.silenceMs, EOT.unfinishedMs]);
    t.clock.increment(1);
    expect(t.endAt()).toEqual([EOT.silenceMs, EOT.unfinishedMs, 0]);
  });

  it('a pause that followed another within one reading: the first pause’s backstop is gone, the new one’s runs', () => {
    const t = turnTaking(ALONE);
    t.speak(1200, UNFINISHED);
    t.pause(20);
    t.clock.increment(1000);
    t.pause(20);
    t.clock.increment(EOT.unfinishedMs - 20 + END_OF_TURN_BACKSTOP_SLACK_MS - 1);
    expect(t.endAt()).toEqual([EOT.unfinishedMs, EOT.unfinishedMs]);
    t.clock.increment(1);
    expect(t.endAt()).toEqual([EOT.unfinishedMs, EOT.unfinishedMs, 0]);
  });

  it('is gone once speech stopped', () => {
    const t = turnTaking(ALONE);
    t.speak(1200, NO_CUE);
    t.pause(20);
    t.stop();
    t.clock.increment(10 * EOT.maxMs);
    expect(t.endAt()).toEqual([EOT.silenceMs]);
  });

  it('the preemption’s lead, re-deciding on a reading that no longer moves, does not put it off', () => {
    const t = turnTaking({ earlyFlushMs: 0 });
    t.speak(1200, NO_CUE);
    t.pause(20);
    const { waitMs } = expected({ interim: NO_CUE, interimSincePause: false, silenceMs: 20 });
    t.clock.increment(waitMs + END_OF_TURN_BACKSTOP_SLACK_MS - 1);
    expect(t.endAt()).not.toContain(0);
    t.clock.increment(1);
    expect(t.endAt().at(-1)).toBe(0);
  });
});

describe('the early flush: a short way into a pause the recognizer gives its final text', () => {
  const FLUSH = { preemption: null } as const;

  it('asks once per pause, at a silence of STT_EARLY_FLUSH_MS', () => {
    const t = turnTaking(FLUSH);
    t.speak(1200, NO_CUE);
    t.pause(20);
    t.listen(S.earlyFlushMs - 21);
    expect(t.of('flush')).toEqual([]);
    t.listen(1);
    const id = t.utterance()!.id;
    expect(t.of('flush')).toEqual([{ type: 'flush', utterance: id, pause: 1, first: true }]);
    t.listen(20);
    t.listen(20);
    expect(t.of('flush')).toHaveLength(1);
    // The next pause has its own (once the first is answered: one flush at a time).
    t.send({ type: 'FLUSHED', utterance: id, text: NO_CUE });
    t.resume();
    t.pause(S.earlyFlushMs);
    expect(t.of('flush')).toEqual([
      { type: 'flush', utterance: id, pause: 1, first: true },
      { type: 'flush', utterance: id, pause: 2, first: true },
    ]);
  });

  it('is off at STT_EARLY_FLUSH_MS 0', () => {
    const t = turnTaking(ALONE);
    t.speak(1200, NO_CUE);
    t.pause(20);
    t.listen(EOT.maxMs);
    expect(t.of('flush')).toEqual([]);
    expect(t.of('recheck')).toEqual([]);
  });

  it('the flushed text is final: a finished one ends at ENDPOINT_MIN_MS at once, though it is the text seen at the pause’s start', () => {
    const t = turnTaking(FLUSH);
    t.speak(1200, FINISHED);
    t.pause(S.earlyFlushMs);
    expect(t.endAt()).toEqual([EOT.silenceMs]);
    t.send({ type: 'FLUSHED', utterance: t.utterance()!.id, text: FINISHED });
    expect(t.endAt()).toEqual([EOT.silenceMs, expected({ interim: FINISHED, interimSincePause: false, final: true, silenceMs: S.earlyFlushMs }).endAtMs]);
    expect(t.endAt().at(-1)).toBe(EOT.minMs);
  });

  it('a final text believes no falling level: the recognizer heard the fall and left the sentence open', () => {
    const t = turnTaking(FLUSH);
    t.speak(1200);
    t.pause(S.earlyFlushMs, -9);
    t.send({ type: 'FLUSHED', utterance: t.utterance()!.id, text: NO_CUE });
    expect(t.endAt().at(-1)).toBe(expected({ interim: NO_CUE, interimSincePause: true, final: true, silenceMs: S.earlyFlushMs, levelDb: -9 }).endAtMs);
    expect(t.endAt().at(-1)).toBe(EOT.silenceMs);
  });

  it('before its answer the text is not final', () => {
    const t = turnTaking(FLUSH);
    t.speak(1200, FINISHED);
    t.pause(S.earlyFlushMs);
    t.listen(20);
    // Re-decided (the same text): still the no-cue wait, the flush not answered.
    t.send({ type: 'INTERIM', text: FINISHED });
    expect(t.endAt()).toEqual([EOT.silenceMs, EOT.silenceMs]);
  });

  it('rechecks a flushed text that does not close, once, at a silence of STT_RECHECK_MS', () => {
    const t = turnTaking(FLUSH);
    t.speak(1200, NO_CUE);
    // A falling level: believed on a text that is not final, not on one that is.
    t.pause(S.earlyFlushMs, -9);
    const id = t.utterance()!.id;
    t.send({ type: 'FLUSHED', utterance: id, text: NO_CUE });
    t.listen(S.recheckMs - S.earlyFlushMs - 1);
    expect(t.of('recheck')).toEqual([]);
    t.listen(1);
    expect(t.of('recheck')).toEqual([{ type: 'recheck', utterance: id, pause: 1 }]);
    expect(t.metrics('early_flush')).toEqual(['rechecked']);
    // The recheck under way leaves the first text standing as final.
    t.send({ type: 'INTERIM', text: NO_CUE + ' le soir' });
    expect(t.endAt().at(-1)).toBe(expected({ interim: NO_CUE + ' le soir', interimSincePause: true, final: true, silenceMs: S.recheckMs, levelDb: -9 }).endAtMs);
    expect(t.endAt().at(-1)).toBe(EOT.silenceMs);
    t.send({ type: 'FLUSHED', utterance: id, text: NO_CUE });
    t.listen(20);
    t.listen(S.recheckMs);
    expect(t.of('recheck')).toHaveLength(1);
    expect(t.of('flush')).toHaveLength(1);
  });

  it('a flushed text that closes its sentence is not rechecked', () => {
    const t = turnTaking(FLUSH);
    t.speak(1200, FINISHED);
    t.pause(S.earlyFlushMs);
    t.send({ type: 'FLUSHED', utterance: t.utterance()!.id, text: FINISHED });
    t.listen(S.recheckMs);
    expect(t.of('recheck')).toEqual([]);
  });

  it('no recheck while the first flush is unanswered; it comes at the first reading after the answer', () => {
    const t = turnTaking(FLUSH);
    t.speak(1200, NO_CUE);
    t.pause(S.earlyFlushMs);
    t.listen(S.recheckMs);
    expect(t.of('recheck')).toEqual([]);
    t.send({ type: 'FLUSHED', utterance: t.utterance()!.id, text: NO_CUE });
    expect(t.of('recheck')).toEqual([]);
    t.listen(20);
    expect(t.of('recheck')).toHaveLength(1);
  });

  it('FLUSH.FAILED stops flushing for the utterance, and its text is not final', () => {
    const t = turnTaking(FLUSH);
    t.speak(1200, FINISHED);
    t.pause(S.earlyFlushMs);
    const id = t.utterance()!.id;
    t.send({ type: 'FLUSH.FAILED', utterance: id });
    t.listen(S.recheckMs);
    t.resume();
    t.pause(S.earlyFlushMs);
    t.listen(S.recheckMs);
    expect(t.of('flush')).toHaveLength(1);
    expect(t.of('recheck')).toEqual([]);
    expect(t.endAt()).toEqual([EOT.silenceMs, EOT.silenceMs]);
  });

  it('FLUSH.SKIPPED (no stream yet) lets the pause try again at the next reading', () => {
    const t = turnTaking(FLUSH);
    t.speak(1200, NO_CUE);
    t.pause(S.earlyFlushMs);
    const id = t.utterance()!.id;
    t.send({ type: 'FLUSH.SKIPPED', utterance: id });
    expect(t.utterance()!.flush.holding).toBe(false);
    t.listen(20);
    expect(t.of('flush')).toEqual([
      { type: 'flush', utterance: id, pause: 1, first: true },
      { type: 'flush', utterance: id, pause: 1, first: true },
    ]);
  });

  it('a skipped recheck is not tried again', () => {
    const t = turnTaking(FLUSH);
    t.speak(1200, NO_CUE);
    t.pause(S.earlyFlushMs);
    const id = t.utterance()!.id;
    t.send({ type: 'FLUSHED', utterance: id, text: NO_CUE });
    t.listen(S.recheckMs);
    t.send({ type: 'FLUSH.SKIPPED', utterance: id });
    t.listen(20);
    t.listen(20);
    expect(t.of('recheck')).toHaveLength(1);
  });

  it('the senior going on after a flush: segment.resumed and the metric, once', () => {
    const t = turnTaking(FLUSH);
    t.speak(1200, NO_CUE);
    t.pause(S.earlyFlushMs);
    const id = t.utterance()!.id;
    t.send({ type: 'FLUSHED', utterance: id, text: NO_CUE });
    t.resume();
    t.send({ type: 'SPEECH.RESUMED', pauseMs: 100 });
    expect(t.of('segment.resumed')).toEqual([{ type: 'segment.resumed', utterance: id }]);
    expect(t.metrics('early_flush')).toEqual(['resumed']);
  });

  it('no segment.resumed when the pause was not flushed', () => {
    const t = turnTaking(FLUSH);
    t.speak(1200, NO_CUE);
    t.pause(20);
    t.resume();
    expect(t.of('segment.resumed')).toEqual([]);
    expect(t.metrics('early_flush')).toEqual([]);
  });

  it('a flush answered after the senior went on leads the text, and decides nothing', () => {
    const t = turnTaking(FLUSH);
    t.speak(1200, NO_CUE);
    t.pause(S.earlyFlushMs);
    const id = t.utterance()!.id;
    t.resume();
    t.send({ type: 'FLUSHED', utterance: id, text: NO_CUE });
    expect(t.utterance()!.interim).toBe(NO_CUE);
    expect(t.endAt()).toEqual([EOT.silenceMs]);
  });

  it('the answer for another utterance is not this one’s', () => {
    const t = turnTaking(FLUSH);
    t.speak(1200, FINISHED);
    t.pause(S.earlyFlushMs);
    t.send({ type: 'FLUSHED', utterance: t.utterance()!.id + 1, text: FINISHED });
    t.send({ type: 'FLUSH.FAILED', utterance: t.utterance()!.id + 1 });
    expect(t.utterance()!.flush).toMatchObject({ pending: true, failed: false });
    expect(t.endAt()).toEqual([EOT.silenceMs]);
  });
});

describe('the preemption lead: the turn’s work starts once the end is within PREEMPTIVE_LEAD_MS and the recognizer has caught up', () => {
  const lead = S.preemption!.leadMs;
  const PREEMPT = { earlyFlushMs: 0 } as const;

  it('starts on the interim only when the end is within the lead: a LEAD on the clock', () => {
    const t = turnTaking(PREEMPT);
    t.speak(1200, NO_CUE);
    t.pause(20);
    const afterMs = preemptAfterMs(expected({ interim: NO_CUE, interimSincePause: false, silenceMs: 20 }), 20, { leadMs: lead, catchUpMs: CATCH_UP_MS });
    expect(afterMs).toBe(EOT.silenceMs - 20 - lead);
    t.listen(afterMs - 1);
    expect(t.of('speculation.start')).toEqual([]);
    t.listen(1);
    expect(t.of('speculation.start')).toEqual([{ type: 'speculation.start', utterance: t.utterance()!.id, text: NO_CUE }]);
  });

  it('not before the recognizer can have caught up (STT_STREAMING_DELAY_MS less the silence’s lag), when the lead allows sooner', () => {
    const t = turnTaking({ ...PREEMPT, preemption: { leadMs: EOT.maxMs, maxPerUtterance: SPECULATIONS_PER_UTTERANCE } });
    t.speak(1200, NO_CUE);
    t.pause(20);
    t.listen(CATCH_UP_MS - 20 - 1);
    expect(t.of('speculation.start')).toEqual([]);
    t.listen(1);
    expect(t.of('speculation.start')).toHaveLength(1);
  });

  it('a final text has nothing to catch up with: it starts at once within the lead', () => {
    const t = turnTaking({ earlyFlushMs: S.earlyFlushMs, preemption: { leadMs: EOT.maxMs, maxPerUtterance: SPECULATIONS_PER_UTTERANCE } });
    t.speak(1200, NO_CUE);
    t.pause(S.earlyFlushMs);
    expect(S.earlyFlushMs).toBeLessThan(CATCH_UP_MS);
    expect(t.of('speculation.start')).toEqual([]);
    t.send({ type: 'FLUSHED', utterance: t.utterance()!.id, text: NO_CUE });
    expect(t.of('speculation.start').map((c) => c.text)).toEqual([NO_CUE]);
  });

  it('a new interim drops the speculation and starts one on the new text', () => {
    const t = turnTaking(PREEMPT);
    t.speak(1200, NO_CUE);
    t.pause(20);
    t.listen(EOT.silenceMs - lead);
    const id = t.utterance()!.id;
    t.send({ type: 'INTERIM', text: NO_CUE + ' le soir' });
    expect(t.of('speculation.drop')).toEqual([{ type: 'speculation.drop', utterance: id }]);
    expect(t.of('speculation.start').map((c) => c.text)).toEqual([NO_CUE, NO_CUE + ' le soir']);
    expect(t.utterance()!.speculation).toBe(NO_CUE + ' le soir');
  });

  it('a new interim before the lead replaces the pending LEAD: the speculation starts at the new decision’s lead', () => {
    const t = turnTaking(PREEMPT);
    t.speak(1200, NO_CUE);
    t.pause(20);
    t.listen(500);
    t.send({ type: 'INTERIM', text: 'Je regarde la télévision et' });
    // Unfinished now: the end is ENDPOINT_UNFINISHED_MS away, the lead further.
    t.listen(EOT.silenceMs - lead - 520);
    expect(t.of('speculation.start')).toEqual([]);
    t.listen(EOT.unfinishedMs - EOT.silenceMs - 1);
    expect(t.of('speculation.start')).toEqual([]);
    t.listen(1);
    expect(t.of('speculation.start').map((c) => c.text)).toEqual(['Je regarde la télévision et']);
  });

  it('speech resuming drops it, and cancels a LEAD to come', () => {
    const t = turnTaking(PREEMPT);
    t.speak(1200, NO_CUE);
    t.pause(20);
    t.listen(EOT.silenceMs - lead);
    const id = t.utterance()!.id;
    t.resume();
    expect(t.of('speculation.drop')).toEqual([{ type: 'speculation.drop', utterance: id }]);
    expect(t.utterance()!.speculation).toBeNull();
    t.send({ type: 'INTERIM', text: 'Je regarde la télévision le soir' });
    t.pause(20);
    t.resume();
    t.clock.increment(10 * EOT.maxMs);
    expect(t.of('speculation.start')).toHaveLength(1);
  });

  it('at most maxPerUtterance speculations in an utterance; the next utterance has its own', () => {
    const t = turnTaking({ ...PREEMPT, preemption: { leadMs: lead, maxPerUtterance: 2 } });
    t.speak(1200, 'Bonjour');
    t.pause(20);
    t.listen(EOT.silenceMs - lead);
    t.send({ type: 'INTERIM', text: 'Bonjour Marie' });
    t.send({ type: 'INTERIM', text: 'Bonjour Marie et Paul' });
    t.listen(100);
    expect(t.of('speculation.start').map((c) => c.text)).toEqual(['Bonjour', 'Bonjour Marie']);
    expect(t.of('speculation.drop')).toHaveLength(2);
    t.send({ type: 'FINAL', utterance: t.stop(), transcript: 'Bonjour Marie et Paul' });
    t.speak(1200, 'Merci');
    t.pause(20);
    t.listen(EOT.silenceMs - lead);
    expect(t.of('speculation.start').map((c) => c.text)).toEqual(['Bonjour', 'Bonjour Marie', 'Merci']);
  });

  it('SPECULATION.REFUSED gives the count back', () => {
    const t = turnTaking({ ...PREEMPT, preemption: { leadMs: lead, maxPerUtterance: 1 } });
    t.speak(1200, 'Bonjour');
    t.pause(20);
    t.listen(EOT.silenceMs - lead);
    const id = t.utterance()!.id;
    t.send({ type: 'SPECULATION.REFUSED', utterance: id });
    expect(t.utterance()).toMatchObject({ speculation: null, speculations: 0 });
    t.send({ type: 'INTERIM', text: 'Bonjour Marie' });
    expect(t.of('speculation.start').map((c) => c.text)).toEqual(['Bonjour', 'Bonjour Marie']);
    // A refusal has no speculation to drop.
    expect(t.of('speculation.drop')).toEqual([]);
  });

  it('FINAL on the speculated text adopts it; a different text does not', () => {
    const t = turnTaking(PREEMPT);
    t.speak(1200, NO_CUE);
    t.pause(20);
    t.listen(EOT.silenceMs - lead);
    const ended = t.final(NO_CUE);
    expect(ended.speculation).toBe(NO_CUE);
    expect(t.of('turn')).toEqual([{ type: 'turn', transcript: NO_CUE, utterance: ended, adopt: true, interrupting: false }]);

    const u = turnTaking(PREEMPT);
    u.speak(1200, NO_CUE);
    u.pause(20);
    u.listen(EOT.silenceMs - lead);
    u.final(NO_CUE + ' le soir');
    expect(u.of('turn').map((c) => c.adopt)).toEqual([false]);
  });

  it('is off without preemption settings', () => {
    const t = turnTaking(ALONE);
    t.speak(1200, NO_CUE);
    t.pause(20);
    t.listen(EOT.silenceMs);
    expect(t.of('speculation.start')).toEqual([]);
  });

  it('nothing to speculate on before the first words', () => {
    const t = turnTaking(PREEMPT);
    t.speak(1200);
    t.pause(20);
    t.listen(EOT.silenceMs);
    expect(t.of('speculation.start')).toEqual([]);
  });
});

describe('barge-in over a reply (echo cancelled): words cut it, wordless speech pauses it, backchannels do not stop it', () => {
  /** A reply playing, and the senior's speech over it. */
  function overReply(change: Partial<TurnTakingSettings> = {}) {
    const t = turnTaking({ ...ALONE, ...change });
    t.send({ type: 'REPLY.STARTED' });
    t.send({ type: 'REPLY.PLAYING' });
    t.send({ type: 'SPEECH.STARTED' });
    return t;
  }

  it('speech over a playing reply is not user_speaking until it cuts the reply', () => {
    const t = overReply();
    expect(t.of('utterance.started')).toEqual([{ type: 'utterance.started', id: 1, playing: true }]);
    expect(t.of('activity')).toEqual([]);
  });

  it('words that are not a backchannel, over BARGE_IN_MIN_MS of speech, cut it', () => {
    const t = overReply();
    t.hear({ speechMs: S.bargeInMinMs - 1, sinceStartMs: S.bargeInMinMs });
    t.send({ type: 'INTERIM', text: WORDS });
    expect(t.of('reply.cut')).toEqual([]);
    t.hear({ speechMs: S.bargeInMinMs, sinceStartMs: S.bargeInMinMs + 20 });
    expect(t.of('reply.cut')).toHaveLength(1);
    expect(t.metrics('barge_in')).toEqual(['interrupted']);
    expect(t.of('activity')).toEqual([{ type: 'activity', state: 'user_speaking' }]);
    // Cut once; the turn that follows interrupts nothing more.
    t.hear({ speechMs: S.bargeInMinMs + 200 });
    const ended = t.final(WORDS);
    expect(t.of('reply.cut')).toHaveLength(1);
    expect(t.of('turn')).toEqual([{ type: 'turn', transcript: WORDS, utterance: ended, adopt: false, interrupting: false }]);
    expect(t.metrics('barge_in')).toEqual(['interrupted']);
  });

  it('speech with no word by FALSE_INTERRUPTION_MS after it started pauses it, once', () => {
    const t = overReply();
    t.hear({ speechMs: S.bargeInMinMs, sinceStartMs: S.falseInterruptionMs - 1 });
    expect(t.of('reply.pause')).toEqual([]);
    t.hear({ sinceStartMs: S.falseInterruptionMs });
    expect(t.of('reply.pause')).toHaveLength(1);
    t.hear({ speechMs: S.bargeInMinMs + 100, sinceStartMs: S.falseInterruptionMs + 100 });
    expect(t.of('reply.pause')).toHaveLength(1);
    expect(t.actor.getSnapshot().context.pausedFor).toBe(1);
  });

  it('late words that are only a backchannel resume it at once: a false interruption', () => {
    const t = overReply();
    t.hear({ speechMs: S.bargeInMinMs, sinceStartMs: S.falseInterruptionMs });
    t.send({ type: 'INTERIM', text: 'mmh oui' });
    expect(t.of('reply.resume')).toHaveLength(1);
    expect(t.metrics('barge_in')).toEqual(['false_interruption']);
    expect(t.utterance()!.resumed).toBe(true);
    // Its end is no backchannel counted, nor a second resume.
    t.final('mmh oui');
    expect(t.of('reply.resume')).toHaveLength(1);
    expect(t.metrics('barge_in')).toEqual(['false_interruption']);
    expect(t.of('turn')).toEqual([]);
  });

  it('late real words cut the paused reply', () => {
    const t = overReply();
    t.hear({ speechMs: S.bargeInMinMs, sinceStartMs: S.falseInterruptionMs });
    t.send({ type: 'INTERIM', text: WORDS });
    expect(t.of('reply.cut')).toHaveLength(1);
    expect(t.metrics('barge_in')).toEqual(['interrupted']);
  });

  it('the utterance that paused it ending empty resumes it (false interruption, no backchannel ignored)', () => {
    const t = overReply();
    t.hear({ speechMs: S.bargeInMinMs, sinceStartMs: S.falseInterruptionMs });
    const ended = t.stop();
    expect(ended.resumed).toBe(false);
    t.take();
    t.send({ type: 'FINAL', utterance: ended, transcript: '' });
    expect(t.of('reply.resume')).toHaveLength(1);
    expect(t.metrics('barge_in')).toEqual(['false_interruption']);
    expect(t.of('activity')).toEqual([{ type: 'activity', state: 'speaking' }]);
    expect(t.of('turn')).toEqual([]);
    expect(t.actor.getSnapshot().context.pausedFor).toBeNull();
  });

  it('the utterance that paused it ending as a backchannel resumes it (false interruption, no backchannel ignored)', () => {
    const t = overReply();
    t.hear({ speechMs: S.bargeInMinMs, sinceStartMs: S.falseInterruptionMs });
    t.take();
    t.final('oui');
    expect(t.of('reply.resume')).toHaveLength(1);
    expect(t.metrics('barge_in')).toEqual(['false_interruption']);
    expect(t.of('turn')).toEqual([]);
  });

  it('a backchannel over a playing reply it did not pause: backchannel ignored, no turn, still speaking', () => {
    const t = overReply();
    t.hear({ speechMs: S.bargeInMinMs + 200, sinceStartMs: 600 });
    t.send({ type: 'INTERIM', text: "d'accord" });
    t.take();
    t.final("d'accord");
    expect(t.of('turn')).toEqual([]);
    expect(t.of('reply.resume')).toEqual([]);
    expect(t.metrics('barge_in')).toEqual(['backchannel_ignored']);
    expect(t.of('activity')).toEqual([{ type: 'activity', state: 'speaking' }]);
  });

  it('words shorter than BARGE_IN_MIN_MS over the reply are no turn either', () => {
    const t = overReply();
    t.hear({ speechMs: S.bargeInMinMs - 1, sinceStartMs: S.bargeInMinMs });
    t.final('quoi');
    expect(t.of('turn')).toEqual([]);
    expect(t.metrics('barge_in')).toEqual(['backchannel_ignored']);
  });

  it('words whose transcript came only at the end: a turn that interrupts the reply', () => {
    const t = overReply();
    t.hear({ speechMs: S.bargeInMinMs, sinceStartMs: 600 });
    const ended = t.final(WORDS);
    expect(t.of('turn')).toEqual([{ type: 'turn', transcript: WORDS, utterance: ended, adopt: false, interrupting: true }]);
    expect(t.metrics('barge_in')).toEqual(['interrupted']);
  });

  it('no echo cancellation: never paused nor cut while speech goes on', () => {
    const t = overReply({ aec: false });
    t.hear({ speechMs: S.bargeInMinMs * 4, sinceStartMs: S.falseInterruptionMs * 2 });
    t.send({ type: 'INTERIM', text: WORDS });
    expect(t.of('reply.pause')).toEqual([]);
    expect(t.of('reply.cut')).toEqual([]);
  });

  it('no reply playing (REPLY.PLAYING not sent): nothing to pause or cut', () => {
    const t = turnTaking(ALONE);
    t.send({ type: 'REPLY.STARTED' });
    t.speak(S.bargeInMinMs * 4, WORDS);
    t.hear({ sinceStartMs: S.falseInterruptionMs * 2 });
    expect(t.of('reply.cut')).toEqual([]);
    expect(t.of('reply.pause')).toEqual([]);
    expect(t.of('activity')).toEqual([{ type: 'activity', state: 'user_speaking' }]);
  });

  it('the reply waits for the utterance that paused it: a new utterance’s first readings do not resume it, its FINAL does', () => {
    const t = overReply();
    t.hear({ speechMs: S.bargeInMinMs, sinceStartMs: S.falseInterruptionMs });
    const first = t.stop();
    t.speak(100);
    expect(t.of('reply.resume')).toEqual([]);
    t.send({ type: 'FINAL', utterance: first, transcript: '' });
    expect(t.of('reply.resume')).toHaveLength(1);
  });

  it('a second wordless speech over the paused reply takes it over: the first one’s end does not resume it, its own does', () => {
    const t = overReply();
    t.hear({ speechMs: S.bargeInMinMs, sinceStartMs: S.falseInterruptionMs });
    const first = t.stop();
    t.speak(S.bargeInMinMs);
    t.hear({ sinceStartMs: S.falseInterruptionMs });
    expect(t.actor.getSnapshot().context.pausedFor).toBe(2);
    t.send({ type: 'FINAL', utterance: first, transcript: '' });
    expect(t.of('reply.resume')).toEqual([]);
    t.final('');
    expect(t.of('reply.resume')).toHaveLength(1);
  });

  it('a reply that played to its end with nobody speaking: listening', () => {
    const t = turnTaking(ALONE);
    t.send({ type: 'REPLY.PLAYING' });
    t.send({ type: 'REPLY.ENDED', played: true });
    t.send({ type: 'REPLY.ENDED', played: false });
    expect(t.commands).toEqual([{ type: 'activity', state: 'listening' }]);
  });

  it('the reply ending clears who paused it, and tells the activity', () => {
    const t = overReply();
    t.hear({ speechMs: S.bargeInMinMs, sinceStartMs: S.falseInterruptionMs });
    t.send({ type: 'REPLY.ENDED', played: true });
    expect(t.actor.getSnapshot().context.pausedFor).toBeNull();
    expect(t.of('activity')).toEqual([{ type: 'activity', state: 'user_speaking' }]);
    t.final('');
    expect(t.of('reply.resume')).toEqual([]);
    expect(t.of('activity').at(-1)).toEqual({ type: 'activity', state: 'listening' });
  });
});

describe('the end of an utterance: its final transcript is a turn, or nothing', () => {
  it('speech stopped hands the utterance over, thinking; its endpointing runs from the last speech on the clock', () => {
    const t = turnTaking(ALONE);
    t.speak(600, NO_CUE);
    t.clock.increment(300);
    t.hear({ speechMs: 900 });
    t.pause(20);
    t.clock.increment(700);
    const ended = t.stop();
    expect(ended).toEqual({ id: 1, speechMs: 900, endpointingMs: 700, speculation: null, resumed: false });
    expect(t.of('utterance.ended')).toEqual([{ type: 'utterance.ended', utterance: ended, playing: false }]);
    expect(t.of('activity')).toEqual([
      { type: 'activity', state: 'user_speaking' },
      { type: 'activity', state: 'thinking' },
    ]);
    expect(t.utterance()).toBeNull();
  });

  it('a transcript is the turn', () => {
    const t = turnTaking(ALONE);
    t.speak(900, FINISHED);
    const ended = t.final(FINISHED);
    expect(t.of('turn')).toEqual([{ type: 'turn', transcript: FINISHED, utterance: ended, adopt: false, interrupting: false }]);
  });

  it('FINAL "" is no turn: listening again', () => {
    const t = turnTaking(ALONE);
    t.speak(900);
    t.take();
    t.final('');
    expect(t.of('turn')).toEqual([]);
    expect(t.of('activity')).toEqual([
      { type: 'activity', state: 'thinking' },
      { type: 'activity', state: 'listening' },
    ]);
  });

  it('FINAL "" while a reply plays: still speaking', () => {
    const t = turnTaking(ALONE);
    t.send({ type: 'REPLY.PLAYING' });
    t.speak(100);
    t.final('');
    expect(t.of('turn')).toEqual([]);
    expect(t.of('activity')).toEqual([{ type: 'activity', state: 'speaking' }]);
  });

  it('FINAL "" drops the speculation', () => {
    const t = turnTaking({ earlyFlushMs: 0 });
    t.speak(900, NO_CUE);
    t.pause(20);
    t.listen(EOT.silenceMs - S.preemption!.leadMs);
    t.final('');
    expect(t.of('speculation.drop')).toEqual([{ type: 'speculation.drop', utterance: 1 }]);
  });

  it('TRANSCRIPTION.FAILED drops the speculation; without one it asks nothing', () => {
    const t = turnTaking({ earlyFlushMs: 0 });
    t.speak(900, NO_CUE);
    t.pause(20);
    t.listen(EOT.silenceMs - S.preemption!.leadMs);
    t.send({ type: 'TRANSCRIPTION.FAILED', utterance: t.stop() });
    expect(t.of('speculation.drop')).toEqual([{ type: 'speculation.drop', utterance: 1 }]);
    expect(t.of('turn')).toEqual([]);

    const u = turnTaking(ALONE);
    u.speak(900, NO_CUE);
    const ended = u.stop();
    u.take();
    u.send({ type: 'TRANSCRIPTION.FAILED', utterance: ended });
    expect(u.commands).toEqual([]);
  });

  it('each utterance has its own id', () => {
    const t = turnTaking(ALONE);
    t.speak(900, 'Un');
    t.final('Un');
    t.speak(900, 'Deux');
    t.final('Deux');
    expect(t.of('utterance.started').map((c) => c.id)).toEqual([1, 2]);
    expect(t.of('turn').map((c) => c.utterance.id)).toEqual([1, 2]);
  });
});

describe('the idle check-in: one line after a reply’s silence of IDLE_CHECKIN_MS, not again until the senior speaks', () => {
  const on = loadConfig({ IDLE_CHECKIN_MS: '30000' });
  const IDLE_MS = on.IDLE_CHECKIN_MS;
  const checkin = () => turnTaking({ ...ALONE, idleCheckinMs: IDLE_MS }, null, on);
  const count = (t: ReturnType<typeof turnTaking>) => t.of('checkin').length;

  it('is off at IDLE_CHECKIN_MS 0 (the default)', () => {
    const t = turnTaking(ALONE);
    expect(t.settings.idleCheckinMs).toBe(0);
    t.send({ type: 'REPLY.ENDED', played: true });
    t.clock.increment(24 * 3_600_000);
    expect(count(t)).toBe(0);
  });

  it('on: the line comes exactly IDLE_CHECKIN_MS after a reply played, not before, once', () => {
    const t = checkin();
    t.send({ type: 'REPLY.STARTED' });
    t.send({ type: 'REPLY.PLAYING' });
    t.send({ type: 'REPLY.ENDED', played: true });
    t.clock.increment(IDLE_MS - 1);
    expect(count(t)).toBe(0);
    t.clock.increment(1);
    expect(count(t)).toBe(1);
    t.clock.increment(10 * IDLE_MS);
    expect(count(t)).toBe(1);
  });

  it('a reply that did not play (cut) starts no silence', () => {
    const t = checkin();
    t.send({ type: 'REPLY.ENDED', played: false });
    t.clock.increment(10 * IDLE_MS);
    expect(count(t)).toBe(0);
  });

  it('another reply ending starts the silence again', () => {
    const t = checkin();
    t.send({ type: 'REPLY.ENDED', played: true });
    t.clock.increment(IDLE_MS - 1000);
    t.send({ type: 'REPLY.ENDED', played: true });
    t.clock.increment(IDLE_MS - 1);
    expect(count(t)).toBe(0);
    t.clock.increment(1);
    expect(count(t)).toBe(1);
  });

  it.each([
    ['a reply starting', { type: 'REPLY.STARTED' }],
    ['the senior speaking', { type: 'SPEECH.STARTED' }],
    ['the microphone muted', { type: 'MUTE', muted: true }],
  ] as Array<[string, TurnTakingEvent]>)('%s cancels it', (_, event) => {
    const t = checkin();
    t.send({ type: 'REPLY.ENDED', played: true });
    t.clock.increment(IDLE_MS - 1);
    t.send(event);
    t.clock.increment(10 * IDLE_MS);
    expect(count(t)).toBe(0);
  });

  it('unmuting cancels nothing', () => {
    const t = checkin();
    t.send({ type: 'REPLY.ENDED', played: true });
    t.send({ type: 'MUTE', muted: false });
    t.clock.increment(IDLE_MS);
    expect(count(t)).toBe(1);
  });

  it('once spoken, the next reply’s end (the line’s own) arms nothing, until the senior speaks', () => {
    const t = checkin();
    t.send({ type: 'REPLY.ENDED', played: true });
    t.clock.increment(IDLE_MS);
    t.send({ type: 'CHECKIN.SPOKEN' });
    t.send({ type: 'REPLY.STARTED' });
    t.send({ type: 'REPLY.PLAYING' });
    t.send({ type: 'REPLY.ENDED', played: true });
    t.clock.increment(10 * IDLE_MS);
    expect(count(t)).toBe(1);
    // The senior speaks; the reply to their turn ends: a new silence may have one.
    t.speak(900, FINISHED);
    t.final(FINISHED);
    t.send({ type: 'REPLY.STARTED' });
    t.send({ type: 'REPLY.PLAYING' });
    t.send({ type: 'REPLY.ENDED', played: true });
    t.clock.increment(IDLE_MS);
    expect(count(t)).toBe(2);
  });

  it('once spoken, a typed turn lets the next silence have one', () => {
    const t = checkin();
    t.send({ type: 'REPLY.ENDED', played: true });
    t.clock.increment(IDLE_MS);
    t.send({ type: 'CHECKIN.SPOKEN' });
    t.send({ type: 'REPLY.ENDED', played: true });
    t.clock.increment(IDLE_MS);
    expect(count(t)).toBe(1);
    t.send({ type: 'TYPED' });
    t.send({ type: 'REPLY.ENDED', played: true });
    t.clock.increment(IDLE_MS);
    expect(count(t)).toBe(2);
  });

  it('a line not spoken (not the moment) spends nothing: the next reply’s end arms it again', () => {
    const t = checkin();
    t.send({ type: 'REPLY.ENDED', played: true });
    t.clock.increment(IDLE_MS);
    t.send({ type: 'REPLY.ENDED', played: true });
    t.clock.increment(IDLE_MS);
    expect(count(t)).toBe(2);
  });

  it('not armed while an utterance is under way', () => {
    const t = checkin();
    t.send({ type: 'REPLY.PLAYING' });
    t.speak(900);
    t.send({ type: 'REPLY.ENDED', played: true });
    t.clock.increment(10 * IDLE_MS);
    expect(count(t)).toBe(0);
  });
});

describe('mute: the utterance under way is dropped', () => {
  it('drops the utterance and its speculation; listening', () => {
    const t = turnTaking({ earlyFlushMs: 0 });
    t.speak(900, NO_CUE);
    t.pause(20);
    t.listen(EOT.silenceMs - S.preemption!.leadMs);
    t.take();
    t.send({ type: 'MUTE', muted: true });
    expect(t.commands).toEqual([
      { type: 'speculation.drop', utterance: 1 },
      { type: 'utterance.dropped' },
      { type: 'activity', state: 'listening' },
    ]);
    expect(t.utterance()).toBeNull();
    expect(t.actor.getSnapshot().context.muted).toBe(true);
    // Its backstop is gone, and its readings and end mean nothing now.
    t.clock.increment(10 * EOT.maxMs);
    t.send({ type: 'SPEECH.STOPPED' });
    expect(t.of('end.at')).toEqual([]);
    expect(t.of('utterance.ended')).toEqual([]);
  });

  it('a reply its speech paused plays on; speaking', () => {
    const t = turnTaking(ALONE);
    t.send({ type: 'REPLY.PLAYING' });
    t.speak(S.bargeInMinMs);
    t.hear({ sinceStartMs: S.falseInterruptionMs });
    expect(t.of('reply.pause')).toHaveLength(1);
    t.take();
    t.send({ type: 'MUTE', muted: true });
    expect(t.of('reply.resume')).toHaveLength(1);
    expect(t.metrics('barge_in')).toEqual(['false_interruption']);
    expect(t.of('activity')).toEqual([{ type: 'activity', state: 'speaking' }]);
  });

  it('muted while a reply plays: speaking', () => {
    const t = turnTaking(ALONE);
    t.send({ type: 'REPLY.PLAYING' });
    t.send({ type: 'MUTE', muted: true });
    expect(t.commands).toEqual([{ type: 'activity', state: 'speaking' }]);
  });

  it('with no utterance, muting says listening and drops nothing; unmuting says nothing', () => {
    const t = turnTaking(ALONE);
    t.send({ type: 'MUTE', muted: true });
    expect(t.commands).toEqual([{ type: 'activity', state: 'listening' }]);
    t.send({ type: 'MUTE', muted: false });
    expect(t.commands).toHaveLength(1);
    expect(t.actor.getSnapshot().context.muted).toBe(false);
  });
});

describe('the pause profile: a pause speech ended is one number for the senior’s profile, under consent only', () => {
  it('a pause at or above the floor updates the profile and the pauses heard', () => {
    const t = turnTaking(ALONE, EMPTY_PAUSE_PROFILE);
    t.send({ type: 'SPEECH.RESUMED', pauseMs: PAUSE_FLOOR_MS - 1 });
    expect(t.actor.getSnapshot().context.heardPauses).toEqual([]);
    expect(t.actor.getSnapshot().context.profile).toEqual(EMPTY_PAUSE_PROFILE);
    t.send({ type: 'SPEECH.RESUMED', pauseMs: PAUSE_FLOOR_MS });
    t.send({ type: 'SPEECH.RESUMED', pauseMs: 812.6 });
    const { profile, heardPauses } = t.actor.getSnapshot().context;
    expect(heardPauses).toEqual([PAUSE_FLOOR_MS, 813]);
    expect(profile).toEqual(recordPause(recordPause(EMPTY_PAUSE_PROFILE, PAUSE_FLOOR_MS), 812.6));
  });

  it('no profile given (no consent): nothing recorded', () => {
    const t = turnTaking(ALONE, null);
    t.send({ type: 'SPEECH.RESUMED', pauseMs: 900 });
    expect(t.actor.getSnapshot().context).toMatchObject({ profile: null, heardPauses: [] });
  });

  it('the pauses written back are bounded (PAUSES_PER_SESSION_MAX); the profile goes on learning', () => {
    const t = turnTaking(ALONE, EMPTY_PAUSE_PROFILE);
    for (let i = 0; i <= PAUSES_PER_SESSION_MAX; i++) t.send({ type: 'SPEECH.RESUMED', pauseMs: 500 });
    const { profile, heardPauses } = t.actor.getSnapshot().context;
    expect(heardPauses).toHaveLength(PAUSES_PER_SESSION_MAX);
    expect(profile!.count).toBe(PAUSES_PER_SESSION_MAX + 1);
  });

  it('the profile learnt in the session moves its later decisions', () => {
    const t = turnTaking(ALONE, EMPTY_PAUSE_PROFILE);
    for (let i = 0; i < 20; i++) t.send({ type: 'SPEECH.RESUMED', pauseMs: 2400 });
    const { profile } = t.actor.getSnapshot().context;
    t.speak(900, NO_CUE);
    t.pause(20);
    expect(t.endAt()).toEqual([expected({ interim: NO_CUE, interimSincePause: false, silenceMs: 20, profile }).endAtMs]);
    expect(t.endAt()).not.toEqual([EOT.silenceMs]);
  });
});
