import { describe, expect, it } from 'vitest';
import { endpointOutcome, heardText, isBackchannel, shouldBargeIn, UNTRANSCRIBED_BARGE_IN_MS } from '../../machines/voice/barge-in.ts';

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

describe('shouldBargeIn', () => {
  const base = { speechMs: 600, interim: 'attendez une seconde', minMs: 400, aec: true, playing: true };

  it('interrupts on enough real speech while the reply plays', () => {
    expect(shouldBargeIn(base)).toBe(true);
  });

  it('does not interrupt below BARGE_IN_MIN_MS, on a backchannel, or when nothing plays', () => {
    expect(shouldBargeIn({ ...base, speechMs: 399 })).toBe(false);
    expect(shouldBargeIn({ ...base, interim: 'oui, d’accord' })).toBe(false);
    expect(shouldBargeIn({ ...base, playing: false })).toBe(false);
  });

  it('is half-duplex without echo cancellation: speech never interrupts', () => {
    expect(shouldBargeIn({ ...base, aec: false, speechMs: 10_000 })).toBe(false);
  });

  it('waits for a transcript, unless the speech is too long to be a backchannel', () => {
    expect(shouldBargeIn({ ...base, interim: '' })).toBe(false);
    expect(shouldBargeIn({ ...base, interim: '', speechMs: UNTRANSCRIBED_BARGE_IN_MS - 1 })).toBe(false);
    expect(shouldBargeIn({ ...base, interim: ' ', speechMs: UNTRANSCRIBED_BARGE_IN_MS })).toBe(true);
    expect(shouldBargeIn({ ...base, interim: '', minMs: 2000, speechMs: 1800 })).toBe(false);
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
