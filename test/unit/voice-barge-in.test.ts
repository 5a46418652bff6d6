import { describe, expect, it } from 'vitest';
import { endpointOutcome, heardText, isBackchannel, overReply } from '../../machines/voice/barge-in.ts';
import { loadConfig } from '../../runtime/config.ts';

describe('backchannels', () => {
  it('recognizes the listener’s encouragements, however transcribed', () => {
    for (const text of ['oui', 'Oui.', 'OUI !', 'ouais', "d'accord", 'D’accord…', 'hum', 'Hmm', 'mmh', 'Mmmmh.', 'mhm', 'ah bon ?', 'Ah bon', 'ok', 'Okay', 'oui oui', 'Oui, d’accord.', 'mmh, oui', 'ah oui', 'je vois', 'très bien', 'Très bien.', 'tout à fait', ' oui ']) {
      expect(isBackchannel(text), text).toBe(true);
    }
  });

  it('does not mistake real speech for a backchannel', () => {
    for (const text of ['', '  ', '…', 'non', 'oui mais attendez', 'attendez', "d'accord, et demain ?", 'ah bon, mon fils vient ?', 'Oui, je voudrais parler de Paul', 'bonjour', 'stop', 'humour', 'euh attendez', 'Euh… non', 'heureux', 'Eugène']) {
      expect(isBackchannel(text), text).toBe(false);
    }
  });

  it('takes a hesitation (« euh », « heu ») for a backchannel, alone or among others', () => {
    for (const text of ['euh', 'Euh…', 'euuuh', 'heu', 'Euh, oui.', 'oui euh d’accord', 'mmh euh']) {
      expect(isBackchannel(text), text).toBe(true);
    }
  });
});

describe('endpointOutcome: the same rule when the senior has stopped', () => {
  const base = { speechMs: 600, transcript: 'attendez une seconde', minMs: 400, playing: true };

  it('a real sentence long enough cuts the reply; with nothing playing every transcript is a turn', () => {
    expect(endpointOutcome(base)).toBe('turn');
    expect(endpointOutcome({ ...base, playing: false, transcript: 'oui', speechMs: 100 })).toBe('turn');
  });

  it('speech shorter than BARGE_IN_MIN_MS does not interrupt, whatever the recognizer made of it', () => {
    expect(endpointOutcome({ ...base, speechMs: 399, transcript: 'quoi' })).toBe('too_short');
    expect(endpointOutcome({ ...base, speechMs: 400, transcript: 'quoi' })).toBe('turn');
  });

  it('a backchannel never interrupts, however long', () => {
    expect(endpointOutcome({ ...base, speechMs: 3000, transcript: 'Ah oui, d’accord.' })).toBe('backchannel');
    expect(endpointOutcome({ ...base, speechMs: 3000, transcript: 'euh' })).toBe('backchannel');
  });
});

describe('overReply: what speech does to the reply playing under it', () => {
  const { BARGE_IN_MIN_MS: minMs, FALSE_INTERRUPTION_MS: falseInterruptionMs } = loadConfig({});
  const base = { speechMs: 600, sinceStartMs: 600, interim: 'attendez une seconde', minMs, falseInterruptionMs, aec: true, playing: true };

  it('defaults: FALSE_INTERRUPTION_MS is 1,500 ms, well past BARGE_IN_MIN_MS and within LiveKit’s ~2 s', () => {
    expect(falseInterruptionMs).toBe(1500);
    expect(falseInterruptionMs).toBeGreaterThan(minMs);
  });

  it('words that are not a backchannel, over BARGE_IN_MIN_MS of speech, cut the reply at once', () => {
    expect(overReply(base)).toBe('cut');
    expect(overReply({ ...base, speechMs: minMs, sinceStartMs: 0 })).toBe('cut');
  });

  it('plays on below BARGE_IN_MIN_MS, on a backchannel however long, or when nothing plays', () => {
    expect(overReply({ ...base, speechMs: minMs - 1 })).toBe('play');
    expect(overReply({ ...base, interim: 'oui, d’accord', speechMs: 5000, sinceStartMs: 5000 })).toBe('play');
    expect(overReply({ ...base, interim: 'euh', speechMs: 5000, sinceStartMs: 5000 })).toBe('play');
    expect(overReply({ ...base, playing: false })).toBe('play');
  });

  it('is half-duplex without echo cancellation: speech never pauses nor cuts', () => {
    expect(overReply({ ...base, aec: false, speechMs: 10_000, sinceStartMs: 10_000 })).toBe('play');
    expect(overReply({ ...base, aec: false, interim: '', speechMs: 10_000, sinceStartMs: 10_000 })).toBe('play');
  });

  it('speech with no word plays on until FALSE_INTERRUPTION_MS after it started, then pauses (never cuts)', () => {
    for (const interim of ['', ' ', '…', ' , ']) {
      expect(overReply({ ...base, interim, sinceStartMs: falseInterruptionMs - 1 }), JSON.stringify(interim)).toBe('play');
      expect(overReply({ ...base, interim, sinceStartMs: falseInterruptionMs }), JSON.stringify(interim)).toBe('pause');
      expect(overReply({ ...base, interim, speechMs: 30_000, sinceStartMs: 30_000 }), JSON.stringify(interim)).toBe('pause');
    }
    // A sound under BARGE_IN_MIN_MS of speech does not even pause, however long the utterance has lasted.
    expect(overReply({ ...base, interim: '', speechMs: minMs - 1, sinceStartMs: 10_000 })).toBe('play');
  });

  it('a pause becomes a cut when words come, and play again when they are only a backchannel', () => {
    const paused = { ...base, interim: '', speechMs: 1800, sinceStartMs: 2000 };
    expect(overReply(paused)).toBe('pause');
    expect(overReply({ ...paused, interim: 'attendez' })).toBe('cut');
    expect(overReply({ ...paused, interim: 'mmh oui' })).toBe('play');
  });
});

describe('heardText', () => {
  const reply = 'Bonjour Jeanne. Votre fils Paul vient dimanche. Il apportera des fleurs.';
  const marks = [
    { sampleOffset: 16_000, textOffset: 15 },
    { sampleOffset: 48_000, textOffset: 48 },
    { sampleOffset: 80_000, textOffset: reply.length },
  ];

  it('keeps the sentences played past, at sentence granularity', () => {
    expect(heardText(reply, marks, 0)).toBe('');
    expect(heardText(reply, marks, 15_999)).toBe('');
    expect(heardText(reply, marks, 16_000)).toBe('Bonjour Jeanne.');
    expect(heardText(reply, marks, 47_999)).toBe('Bonjour Jeanne.');
    expect(heardText(reply, marks, 60_000)).toBe('Bonjour Jeanne. Votre fils Paul vient dimanche.');
    expect(heardText(reply, marks, 1e9)).toBe(reply);
  });

  it('accepts marks in any order and never returns more than was sent', () => {
    expect(heardText(reply, [...marks].reverse(), 50_000)).toBe('Bonjour Jeanne. Votre fils Paul vient dimanche.');
    expect(heardText('Bonjour Jeanne.', [{ sampleOffset: 0, textOffset: 500 }], 10)).toBe('Bonjour Jeanne.');
    expect(heardText(reply, [], 1e9)).toBe('');
  });

  it('rejects a nonsensical playback position', () => {
    expect(() => heardText(reply, marks, -1)).toThrow(RangeError);
    expect(() => heardText(reply, marks, Number.NaN)).toThrow(RangeError);
  });
});
