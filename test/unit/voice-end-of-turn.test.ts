import { describe, expect, it } from 'vitest';
import { endOfTurn, FALLING_LEVEL_DB, preemptAfterMs, sensedWaits, turnCue, validateEndOfTurnSettings, type EndOfTurnInput, type TurnCue } from '../../machines/voice/end-of-turn.ts';
import { EMPTY_PAUSE_PROFILE, PAUSE_MIN_COUNT, recordPauses } from '../../machines/voice/pause-profile.ts';

const settings = { minMs: 400, silenceMs: 700, unfinishedMs: 2500, maxMs: 3000 };
const decide = (input: Partial<EndOfTurnInput>) => endOfTurn({ interim: '', interimSincePause: true, silenceMs: 0, levelDb: null, profile: null, settings, ...input });

describe('the French ending of an interim transcript', () => {
  const table: Array<[string, TurnCue, string]> = [
    // conjunctions and relatives
    ['Je suis allée au marché et', 'unfinished', 'conjunction'],
    ['Je voulais venir mais', 'unfinished', 'conjunction'],
    ['du thé ou', 'unfinished', 'conjunction'],
    ['Il pleuvait donc', 'unfinished', 'conjunction'],
    ['Je suis restée parce que', 'unfinished', 'conjunction (two words)'],
    ['Je suis restée parce qu’', 'unfinished', 'conjunction elided, typographic apostrophe'],
    ['Je pense que', 'unfinished', 'unclosed clause'],
    ['C’est ma voisine qui', 'unfinished', 'relative'],
    // prepositions
    ['Je suis allée chez', 'unfinished', 'preposition'],
    ['Le bouquet de', 'unfinished', 'preposition'],
    ['Je vais à', 'unfinished', 'preposition'],
    ['On est allés au', 'unfinished', 'contracted preposition'],
    ['Je suis partie avec', 'unfinished', 'preposition'],
    ['Il est dans', 'unfinished', 'preposition'],
    ['pour', 'unfinished', 'preposition alone'],
    // determiners
    ['J’ai vu le', 'unfinished', 'determiner'],
    ['Elle a mis la', 'unfinished', 'determiner'],
    ['J’ai acheté des', 'unfinished', 'determiner'],
    ['J’ai appelé mon', 'unfinished', 'possessive'],
    ['Il y avait une', 'unfinished', 'determiner'],
    ['Regarde ce', 'unfinished', 'demonstrative'],
    // pronouns, auxiliaries, modals
    ['Hier je', 'unfinished', 'subject pronoun'],
    ['Hier j’ai', 'unfinished', 'auxiliary after elision'],
    ['Ce matin je suis', 'unfinished', 'auxiliary'],
    ['Dans le jardin il y a', 'unfinished', 'il y a'],
    ['Demain je vais', 'unfinished', 'modal'],
    ['Il faut', 'unfinished', 'modal'],
    // hesitations
    ['Je voudrais euh', 'unfinished', 'hesitation'],
    ['Alors heu', 'unfinished', 'hesitation'],
    ['Ben', 'unfinished', 'hesitation'],
    ['Je voulais dire, euh.', 'unfinished', 'hesitation before a guessed period'],
    // elisions and open clauses
    ['Je suis allée à l’', 'unfinished', 'elided determiner'],
    ['La maison d’', 'unfinished', 'elided preposition'],
    ['Il m’a dit qu’', 'unfinished', 'elided conjunction'],
    ['Mon fils, ma fille,', 'unfinished', 'comma'],
    ['Je ne sais pas…', 'unfinished', 'trailing off'],
    ['Je ne sais pas...', 'unfinished', 'trailing off (three dots)'],
    // closed by the recognizer
    ['Je suis allée au marché ce matin.', 'finished', 'period'],
    ['Vous venez demain ?', 'finished', 'question mark'],
    ['Et toi ?', 'finished', 'question mark after a conjunction'],
    ['Quelle belle journée !', 'finished', 'exclamation'],
    ['« C’est fini. »', 'finished', 'period inside guillemets'],
    ['Il fait beau. Et', 'unfinished', 'a new sentence begun'],
    // questions by their form
    ['Comment allez-vous', 'finished', 'inversion'],
    ['Viendra-t-il', 'finished', 'inversion with -t-'],
    ['Est-ce que tu viens demain', 'finished', 'est-ce que'],
    ['Pourquoi il pleut toujours', 'finished', 'interrogative opening'],
    // numbers
    ['Le rendez-vous est à 3', 'finished', 'a time after à'],
    ['Je passe vers 10 h 30', 'finished', 'a time after vers'],
    ['Mon anniversaire est le 12', 'finished', 'a date'],
    ['Rendez-vous à 3.', 'finished', 'a time, closed'],
    ['J’ai 3', 'none', 'a bare number tells nothing'],
    // pronouns, not determiners
    ['J’en ai un', 'none', 'un as a pronoun'],
    ['Il y en a une', 'none', 'une as a pronoun'],
    // no cue
    ['Je suis allée au marché', 'none', 'a content word'],
    ['Je pense à vous', 'none', 'vous ends a sentence'],
    ['', 'none', 'empty interim'],
    ['   ', 'none', 'blank interim'],
  ];
  it.each(table)('« %s » → %s (%s)', (interim, cue) => {
    expect(turnCue(interim)).toBe(cue);
  });

  it('reads only the last words: a long transcript costs the same', () => {
    const long = `${'Je me souviens de la maison de mon enfance. '.repeat(200)}Et`;
    expect(turnCue(long)).toBe('unfinished');
    expect(turnCue(`${long} puis nous sommes partis.`)).toBe('finished');
  });
});

describe('the end-of-turn decision', () => {
  it('waits ENDPOINT_UNFINISHED_MS after an unfinished ending, ENDPOINT_MIN_MS after a finished one, ENDPOINT_SILENCE_MS otherwise', () => {
    expect(decide({ interim: 'Je suis allée chez', silenceMs: 100 })).toEqual({ end: false, cue: 'unfinished', endAtMs: 2500, waitMs: 2400 });
    expect(decide({ interim: 'Vous venez demain ?', silenceMs: 100 })).toEqual({ end: false, cue: 'finished', endAtMs: 400, waitMs: 300 });
    expect(decide({ interim: 'Je suis allée au marché', silenceMs: 100 })).toEqual({ end: false, cue: 'none', endAtMs: 700, waitMs: 600 });
    expect(decide({ interim: '', silenceMs: 100 })).toMatchObject({ cue: 'none', endAtMs: 700 });
  });

  it('ends at once when the silence already covers the wait (the recognizer caught up late)', () => {
    expect(decide({ interim: 'Vous venez demain ?', silenceMs: 480 })).toEqual({ end: true, cue: 'finished', endAtMs: 400, waitMs: 0 });
    expect(decide({ interim: 'Je suis allée chez', silenceMs: 2600 })).toMatchObject({ end: true, cue: 'unfinished' });
  });

  it('does not trust a finished ending the recognizer gave before the pause began (its last words may be on their way)', () => {
    expect(decide({ interim: 'Bonjour.', interimSincePause: false, silenceMs: 50 })).toMatchObject({ cue: 'none', endAtMs: 700 });
    // An unfinished one is trusted at once: waiting longer never cuts anyone.
    expect(decide({ interim: 'Bonjour, je voudrais', interimSincePause: false, silenceMs: 50 })).toMatchObject({ cue: 'unfinished', endAtMs: 2500 });
  });

  it('a falling level with no text cue waits halfway between ENDPOINT_MIN_MS and ENDPOINT_SILENCE_MS; text cues win over it', () => {
    expect(decide({ interim: 'Je suis allée au marché', levelDb: FALLING_LEVEL_DB - 1 })).toMatchObject({ cue: 'falling', endAtMs: 550 });
    expect(decide({ interim: 'Je suis allée au marché', levelDb: FALLING_LEVEL_DB + 1 })).toMatchObject({ cue: 'none', endAtMs: 700 });
    expect(decide({ interim: 'Je suis allée chez', levelDb: -20 })).toMatchObject({ cue: 'unfinished', endAtMs: 2500 });
    // Before the recognizer caught up, the level is not believed either.
    expect(decide({ interim: 'Je suis allée au marché', levelDb: -20, interimSincePause: false })).toMatchObject({ cue: 'none', endAtMs: 700 });
  });

  it('a final text (flushed early in the pause) is believed at once, and a falling level adds nothing to it', () => {
    // The recognizer's final text holds every word said: a closed sentence ends at the finished wait …
    expect(decide({ interim: 'Bonjour.', interimSincePause: false, final: true, silenceMs: 250 })).toMatchObject({ cue: 'finished', endAtMs: 400 });
    // … an open one waits the no-cue time even on a falling level (the recognizer heard the fall and left it open) …
    expect(decide({ interim: 'Une baleine', final: true, levelDb: -20 })).toMatchObject({ cue: 'none', endAtMs: 700 });
    // … and an unfinished ending is as unfinished as ever.
    expect(decide({ interim: 'Je suis allée chez', final: true })).toMatchObject({ cue: 'unfinished', endAtMs: 2500 });
    expect(decide({ interim: 'J’ai vu le.', final: true })).toMatchObject({ cue: 'unfinished' });
  });

  it('never waits past ENDPOINT_MAX_MS, whatever the settings and the profile', () => {
    const slow = recordPauses(EMPTY_PAUSE_PROFILE, new Array(60).fill(2900));
    for (const interim of ['Je voulais te dire que', 'Je suis allée chez', '', 'Bon.']) {
      const d = decide({ interim, profile: slow, silenceMs: 0 });
      expect(d.endAtMs).toBeLessThanOrEqual(settings.maxMs);
    }
    expect(decide({ interim: 'Je voulais te dire que', profile: slow, silenceMs: 3000 })).toMatchObject({ end: true, endAtMs: 3000 });
  });

  it('a senior’s pauses move the no-cue wait both ways and only lengthen the unfinished one, within the settings’ bounds', () => {
    const few = recordPauses(EMPTY_PAUSE_PROFILE, new Array(PAUSE_MIN_COUNT - 1).fill(1500));
    expect(sensedWaits(few, settings)).toEqual({ finishedMs: 400, noCueMs: 700, fallingMs: 550, unfinishedMs: 2500 });
    // Long pauses (p90 about 1.5 s): the no-cue wait grows to p90 + margin.
    const slow = recordPauses(EMPTY_PAUSE_PROFILE, new Array(40).fill(1450));
    const slowWaits = sensedWaits(slow, settings);
    expect(slowWaits.noCueMs).toBeGreaterThan(1600);
    expect(slowWaits.noCueMs).toBeLessThanOrEqual(2500);
    expect(slowWaits.unfinishedMs).toBe(2500);
    expect(slowWaits.finishedMs).toBe(400);
    // Very long ones: the unfinished wait grows too, up to ENDPOINT_MAX_MS and no further.
    const slower = sensedWaits(recordPauses(EMPTY_PAUSE_PROFILE, new Array(40).fill(2850)), settings);
    expect(slower.unfinishedMs).toBe(3000);
    expect(slower.noCueMs).toBe(slower.unfinishedMs);
    // Short pauses: the no-cue wait shrinks (p90 + margin), never below halfway to ENDPOINT_MIN_MS; the unfinished wait stays.
    const quick = sensedWaits(recordPauses(EMPTY_PAUSE_PROFILE, new Array(40).fill(220)), settings);
    expect(quick.noCueMs).toBe(590);
    expect(sensedWaits(recordPauses(EMPTY_PAUSE_PROFILE, new Array(40).fill(220)), { ...settings, minMs: 600 }).noCueMs).toBe(650);
    expect(quick.unfinishedMs).toBe(2500);
  });

  it('settings in any other order than min < silence < unfinished ≤ max are refused', () => {
    expect(() => validateEndOfTurnSettings(settings)).not.toThrow();
    expect(() => validateEndOfTurnSettings({ ...settings, unfinishedMs: 3000 })).not.toThrow();
    for (const bad of [{ minMs: 700 }, { silenceMs: 2500 }, { unfinishedMs: 3100 }, { minMs: 0 }, { maxMs: Number.NaN }]) {
      expect(() => validateEndOfTurnSettings({ ...settings, ...bad }), JSON.stringify(bad)).toThrow(RangeError);
    }
  });
});

describe('when the preemptive turn starts', () => {
  const lead = { leadMs: 600, catchUpMs: 420 };
  const wait = (waitMs: number) => ({ end: waitMs === 0, cue: 'none' as const, endAtMs: 700, waitMs });

  it('once the end of the pause is within the lead', () => {
    expect(preemptAfterMs(wait(2000), 500, lead)).toBe(1400);
    expect(preemptAfterMs(wait(600), 500, lead)).toBe(0);
    expect(preemptAfterMs(wait(0), 900, lead)).toBe(0);
  });

  it('not before the recognizer can have given the words said before the pause, even if the end is near', () => {
    expect(preemptAfterMs(wait(300), 100, lead)).toBe(320);
    // An end decided before the recognizer caught up (a question by its form on half a sentence) gets no speculation at all:
    // the endpoint comes first and the turn does its own work.
    expect(preemptAfterMs(wait(0), 400, lead)).toBe(20);
  });
});
