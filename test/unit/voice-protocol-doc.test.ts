import { readFile } from 'node:fs/promises';
import { describe, expect, it } from 'vitest';
import { heardText } from '../../machines/voice/barge-in.ts';
import { parseClientFrame } from '../../runtime/protocol/messages.ts';

/** The voice example exchange of docs/protocol.md: its frames in order, and its prose comments. */
async function voiceExample(): Promise<{ frames: Array<{ dir: string; frame: Record<string, any> }>; comments: string }> { // eslint-disable-line @typescript-eslint/no-explicit-any
  const doc = await readFile(new URL('../../docs/protocol.md', import.meta.url), 'utf8');
  const block = /### Example exchange \(voice\)\s+```\n([\s\S]*?)```/.exec(doc)?.[1];
  if (!block) throw new Error('docs/protocol.md has no voice example exchange');
  const lines = block.split('\n');
  const frames = lines.flatMap((line) => {
    const m = /^([←→]) (\{.*\})$/.exec(line);
    return m ? [{ dir: m[1]!, frame: JSON.parse(m[2]!) as Record<string, any> }] : []; // eslint-disable-line @typescript-eslint/no-explicit-any
  });
  return { frames, comments: lines.filter((l) => /^\s+\(/.test(l) || /^\s{4}\S/.test(l)).join(' ').replace(/\s+/g, ' ') };
}

describe('docs/protocol.md, voice example exchange', () => {
  it('every frame the kiosk sends in it is one the runtime accepts', async () => {
    const { frames } = await voiceExample();
    const sent = frames.filter((f) => f.dir === '→');
    expect(sent.length).toBeGreaterThan(2);
    for (const { frame } of sent) expect(parseClientFrame(JSON.stringify(frame)), frame.type).toMatchObject({ ok: true });
  });

  it('what the conversation keeps after the barge-in is what its own marks and playedMs give', async () => {
    const { frames, comments } = await voiceExample();
    const received = frames.filter((f) => f.dir === '←').map((f) => f.frame);
    const rate = received.find((f) => f.type === 'session.ready')!.audio.output.sampleRate as number;
    const cut = received.find((f) => f.type === 'reply.audio.clear')!.turnId as string;
    const text = received.find((f) => f.type === 'reply.done' && f.turnId === cut)!.text as string;
    const marks = received.filter((f) => f.type === 'reply.audio.mark' && f.turnId === cut).map((f) => ({ sampleOffset: f.sampleOffset as number, textOffset: f.textOffset as number }));
    // The runtime decides on the kiosk's last report before the clear.
    const clearAt = frames.findIndex((f) => f.frame.type === 'reply.audio.clear');
    const progress = frames.slice(0, clearAt).filter((f) => f.dir === '→' && f.frame.type === 'playback.progress' && f.frame.turnId === cut).at(-1)!.frame;
    const kept = /keeps « (.+?) »/.exec(comments)?.[1];
    expect(kept).toBeDefined();
    expect(heardText(text, marks, Math.floor((progress.playedMs * rate) / 1000))).toBe(kept);
    // Each mark's text ends where a sentence or clause of the reply ends.
    for (const mark of marks) expect(text.slice(0, mark.textOffset)).toMatch(/[,.?!]$/);
  });

  it('a false interruption pauses a reply during the speech and resumes it after, with no clear, the position frozen between', async () => {
    const { frames, comments } = await voiceExample();
    const at = (match: (f: { dir: string; frame: Record<string, any> }) => boolean, from = 0) => frames.findIndex((f, i) => i >= from && match(f)); // eslint-disable-line @typescript-eslint/no-explicit-any
    const pause = at((f) => f.frame.type === 'reply.audio.pause');
    const resume = at((f) => f.frame.type === 'reply.audio.resume');
    expect(pause).toBeGreaterThan(0);
    expect(resume).toBeGreaterThan(pause);
    const { turnId } = frames[pause]!.frame;
    expect(frames[resume]!.frame.turnId).toBe(turnId);
    expect(frames.slice(pause, resume).some((f) => f.frame.type === 'reply.audio.clear' || f.frame.type === 'transcript.final')).toBe(false);
    // Paused while the senior's speech goes on, resumed once it stopped.
    expect(frames.slice(0, pause).filter((f) => f.frame.type === 'vad').at(-1)!.frame.state).toBe('speech_started');
    expect(at((f) => f.frame.type === 'vad', pause)).toBeLessThan(resume);
    const played = frames.slice(pause, resume).filter((f) => f.dir === '→' && f.frame.type === 'playback.progress').map((f) => f.frame.playedMs as number);
    expect(played.length).toBeGreaterThan(0);
    expect(new Set(played).size).toBe(1);
    expect(comments).toContain(`plays on from ${played[0]!.toLocaleString('en-US')} ms`);
  });
});
