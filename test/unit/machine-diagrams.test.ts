import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { getStateNodes } from 'xstate/graph';
import { turnTakingMachine } from '../../machines/voice/turn-taking.machine.ts';
import { blockIn, diagramBlock, machineDiagram, mermaidId } from '../../scripts/draw-machine.ts';

const doc = () => readFileSync(new URL('../../docs/architecture.md', import.meta.url), 'utf8');

describe('the turn-taking diagram in docs/architecture.md', () => {
  it('is what `npm run docs:machines` generates from the machine', () => {
    const block = blockIn(doc(), 'turn-taking');
    expect(block, 'docs/architecture.md has no <!-- machine:turn-taking --> block').not.toBeNull();
    expect(block === diagramBlock(turnTakingMachine), 'the diagram differs from machines/voice/turn-taking.machine.ts: run `npm run docs:machines` and commit the result').toBe(true);
  });

  it('draws every state of the machine, and every transition that changes one', () => {
    const block = blockIn(doc(), 'turn-taking') ?? '';
    const states = getStateNodes(turnTakingMachine);
    expect(states.map((s) => s.key)).toEqual(expect.arrayContaining(['utterance', 'reply', 'checkin', 'silent', 'speaking', 'paused', 'playing', 'quiet', 'armed', 'spent']));
    for (const state of states) {
      const id = mermaidId(state);
      expect(block, `state ${state.path.join('.')} is missing`).toMatch(new RegExp(`state (${id}|"${state.key}" as ${id})\\b`));
    }
    const { mermaid } = machineDiagram(turnTakingMachine);
    expect(mermaid).toContain('utterance_silent --> utterance_speaking : SPEECH.STARTED');
    expect(mermaid).toContain('utterance_speaking --> utterance_paused : HEARD [newPause]');
    expect(mermaid).toMatch(/checkin_armed --> checkin_quiet : .*after idleCheckin/);
    expect(mermaid.split('\n').filter((l) => l.trim() === '--')).toHaveLength(2);
  });
});
