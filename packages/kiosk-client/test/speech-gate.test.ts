import { describe, expect, it } from 'vitest';
import { levelDb, SPEECH_GATE_DEFAULTS, SpeechGate } from '../src/browser/speech-gate.ts';

const FRAME_MS = 20;
const SAMPLES = 320;
const { preRollMs, hangOverMs, onsetMs } = SPEECH_GATE_DEFAULTS;

/** A 20 ms frame: a 300 Hz tone at `dbfs` (peak), or digital silence; each frame its own object, to follow it through the gate. */
function frame(dbfs: number | null): Int16Array {
  const f = new Int16Array(SAMPLES);
  if (dbfs === null) return f;
  const amplitude = 32767 * 10 ** (dbfs / 20);
  for (let i = 0; i < SAMPLES; i++) f[i] = Math.round(amplitude * Math.sin((2 * Math.PI * 300 * i) / 16000));
  return f;
}

const frames = (ms: number, dbfs: number | null) => Array.from({ length: ms / FRAME_MS }, () => frame(dbfs));

describe('the speech gate: only around speech, with pre-roll and hang-over', () => {
  it('measures a frame’s level in dBFS', () => {
    expect(levelDb(frame(null))).toBe(-96);
    // A sine's RMS is 3 dB under its peak.
    expect(levelDb(frame(-20))).toBeCloseTo(-23, 0);
  });

  it('sends nothing of silence or room noise, then the pre-roll and the speech, then a hang-over, then nothing', () => {
    const gate = new SpeechGate(FRAME_MS);
    const room = frames(2000, -70);
    const speech = frames(1000, -20);
    const after = frames(2000, -70);
    const sent: Int16Array[] = [];
    for (const f of room) sent.push(...gate.push(f));
    expect(sent).toEqual([]);
    for (const f of speech) sent.push(...gate.push(f));
    // The gate opened after its onset, with the pre-roll it kept: the room just before, then the speech's first frames.
    const preRoll = preRollMs / FRAME_MS;
    const onsetFrames = onsetMs / FRAME_MS;
    expect(sent.slice(0, preRoll - onsetFrames + 1)).toEqual(room.slice(-(preRoll - onsetFrames + 1)));
    expect(sent.slice(preRoll - onsetFrames + 1)).toEqual(speech.slice(0));
    expect(sent.length).toBe(room.slice(-(preRoll - onsetFrames + 1)).length + speech.length);
    const before = sent.length;
    for (const f of after) sent.push(...gate.push(f));
    // The hang-over: the speech's tail goes on for hangOverMs, then the gate closes.
    expect(sent.length - before).toBe(hangOverMs / FRAME_MS);
    expect(gate.open).toBe(false);
  });

  it('opens again on the next speech, with its own pre-roll', () => {
    const gate = new SpeechGate(FRAME_MS);
    for (const f of [...frames(1000, null), ...frames(500, -25), ...frames(1500, null)]) gate.push(f);
    expect(gate.open).toBe(false);
    let out: Int16Array[] = [];
    for (const f of frames(onsetMs, -25)) out = gate.push(f);
    expect(gate.open).toBe(true);
    expect(out.length).toBe(preRollMs / FRAME_MS + 1);
  });

  it('a click shorter than the onset does not open it', () => {
    const gate = new SpeechGate(FRAME_MS);
    const sent = [...frames(1000, -70), ...frames(onsetMs - FRAME_MS, -10), ...frames(1000, -70)].flatMap((f) => gate.push(f));
    expect(sent).toEqual([]);
  });

  it('a constant loud noise becomes the floor and closes it again (a television, a fan)', () => {
    const gate = new SpeechGate(FRAME_MS);
    for (const f of frames(1000, null)) gate.push(f);
    for (const f of frames(60, -30)) gate.push(f);
    expect(gate.open).toBe(true);
    let open = true;
    for (let ms = 0; ms < 60_000 && open; ms += FRAME_MS) {
      gate.push(frame(-30));
      open = gate.open;
    }
    expect(open).toBe(false);
  });

  it('reset forgets the pre-roll (after a mute)', () => {
    const gate = new SpeechGate(FRAME_MS);
    for (const f of frames(1000, -70)) gate.push(f);
    gate.reset();
    let out: Int16Array[] = [];
    for (const f of frames(onsetMs, -20)) out = gate.push(f);
    expect(out.length).toBe(onsetMs / FRAME_MS);
  });
});
