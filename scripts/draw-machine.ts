/**
 * Draws an XState machine's states as a Mermaid `stateDiagram-v2`, from the machine itself (never by hand).
 *
 *   node scripts/draw-machine.ts turn-taking   prints the turn-taking machine's diagram block
 *   node scripts/draw-machine.ts session       prints the session machine's
 *   node scripts/draw-machine.ts --write       rewrites every diagram block in docs/*.md (`npm run docs:machines`)
 *   node scripts/draw-machine.ts NAME --write  rewrites that machine's blocks only
 *
 * A block lies between `<!-- machine:NAME -->` and `<!-- /machine:NAME -->`; test/unit/machine-diagrams.test.ts
 * fails when one differs from what this script generates. The graph is xstate/graph's `toDirectedGraph`
 * (plus the eventless `always` transitions it leaves out). Parallel regions are composite states separated
 * by `--`; a transition reads `EVENT [guard]`, a delayed one `after <delay>`, an invoked actor's
 * `done: <src>` / `error: <src>`; the transitions a compound state declares for all its children are drawn
 * from each child; transitions that change no state are listed under the diagram.
 */
import { readdirSync, readFileSync, writeFileSync } from 'node:fs';
import type { AnyStateMachine, AnyStateNode, AnyTransitionDefinition } from 'xstate';
import { toDirectedGraph, type DirectedGraphNode } from 'xstate/graph';
import { docComment, exitOnHelp } from '../runtime/cli/usage.ts';

/** The machines the docs draw, by the name their markers use. */
export const MACHINES: Record<string, () => Promise<AnyStateMachine>> = {
  'turn-taking': async () => (await import('../machines/voice/turn-taking.machine.ts')).turnTakingMachine,
  session: async () => (await import('../machines/session/session.machine.ts')).sessionMachine,
};

const DOCS_DIR = new URL('../docs/', import.meta.url);

/** A state node's Mermaid id: its path below the root, joined by `_` (Mermaid ids are global; `silent` is in two regions). */
export function mermaidId(node: AnyStateNode): string {
  const path = node.path.length === 0 ? [node.machine.id] : node.path;
  return path.join('_').replace(/\W/g, '_');
}

function isAncestorOrSelf(ancestor: AnyStateNode, node: AnyStateNode): boolean {
  for (let n: AnyStateNode | undefined = node; n; n = n.parent) if (n === ancestor) return true;
  return false;
}

/** The innermost state node both lie in (the block of the diagram an edge between them is written in). */
function commonAncestor(a: AnyStateNode, b: AnyStateNode): AnyStateNode {
  for (let n: AnyStateNode | undefined = a; n; n = n.parent) if (isAncestorOrSelf(n, b) && n !== a && n !== b) return n;
  for (let n: AnyStateNode | undefined = a.parent; n; n = n.parent) if (isAncestorOrSelf(n, b)) return n;
  return a.machine.root;
}

/** The child of `ancestor` that `node` lies in (or is). */
function childBelow(ancestor: AnyStateNode, node: AnyStateNode): AnyStateNode {
  let n = node;
  while (n.parent && n.parent !== ancestor) n = n.parent;
  return n;
}

/** `node`'s path below `ancestor`, dotted. */
function relativePath(ancestor: AnyStateNode, node: AnyStateNode): string {
  return node.path.slice(ancestor.path.length).join('.');
}

function guardText(guard: unknown): string | null {
  if (guard === undefined || guard === null) return null;
  if (typeof guard === 'string') return guard;
  if (typeof guard === 'object' && 'type' in guard && typeof guard.type === 'string') return guard.type;
  // An inline function: named only by the property it was written in (`guard`), so nothing to tell.
  return 'inline';
}

/** `EVENT [guard]`, `after <delay>`, `done: <src>`, `error: <src>`, `always [guard]`. */
export function transitionLabel(source: AnyStateNode, t: AnyTransitionDefinition): string {
  const type = t.eventType;
  let event: string = type;
  const invoked = /^xstate\.(done|error)\.actor\.(.+)$/.exec(type);
  if (type === '') event = 'always';
  else if (type.startsWith('xstate.after.')) {
    const delay = (t as { delay?: string | number }).delay;
    event = `after ${typeof delay === 'number' ? `${delay} ms` : String(delay)}`;
  } else if (invoked) {
    const inv = source.invoke.find((i) => i.id === invoked[2]);
    event = `${invoked[1]}: ${inv && typeof inv.src === 'string' ? inv.src : (inv?.id ?? invoked[2])}`;
  }
  const guard = guardText(t.guard);
  return guard === null ? event : `${event} [${guard}]`;
}

interface Edge {
  from: AnyStateNode;
  to: AnyStateNode;
  labels: string[];
}

/** Every transition of the machine, as `toDirectedGraph` gives them, plus the `always` ones it leaves out, in declaration order. */
function transitionsOf(graph: DirectedGraphNode): Array<{ source: AnyStateNode; t: AnyTransitionDefinition }> {
  const out: Array<{ source: AnyStateNode; t: AnyTransitionDefinition }> = [];
  const visit = (g: DirectedGraphNode) => {
    for (const e of g.edges) out.push({ source: g.stateNode, t: e.transition });
    for (const t of g.stateNode.always ?? []) out.push({ source: g.stateNode, t });
    g.children.forEach(visit);
  };
  visit(graph);
  return out;
}

/** The Mermaid `stateDiagram-v2` of a machine and, apart, the transitions that change no state (by the state declaring them). */
export function machineDiagram(machine: AnyStateMachine): { mermaid: string; inPlace: Array<{ state: string; labels: string[] }> } {
  const graph = toDirectedGraph(machine);
  const edges: Edge[] = [];
  const inPlace = new Map<AnyStateNode, string[]>();
  const regionWide: Array<() => void> = [];
  const addEdge = (source: AnyStateNode, target: AnyStateNode, transition: string) => {
    // Mermaid cannot join states inside different composite states (it moves them out): such an edge is
    // drawn between the composites, its label naming the inner state it leaves or enters.
    let from = source;
    let to = target;
    let label = transition;
    if (from !== to) {
      const block = commonAncestor(from, to);
      from = childBelow(block, source);
      to = childBelow(block, target);
      if (from !== source) label = `${label} (from ${relativePath(from, source)})`;
      if (to !== target) label = `${label} (to ${relativePath(to, target)})`;
    }
    const same = edges.find((e) => e.from === from && e.to === to);
    if (same) {
      if (!same.labels.includes(label)) same.labels.push(label);
    } else edges.push({ from, to, labels: [label] });
  };
  const addInPlace = (node: AnyStateNode, label: string) => {
    const labels = inPlace.get(node) ?? [];
    if (!labels.includes(label)) labels.push(label);
    inPlace.set(node, labels);
  };

  for (const { source, t } of transitionsOf(graph)) {
    const label = transitionLabel(source, t);
    const targets = (t.target ?? []) as AnyStateNode[];
    if (targets.length === 0) {
      addInPlace(source, label);
      continue;
    }
    for (const target of targets) {
      if (target === source && !t.reenter) addInPlace(source, label);
      else if (source.type === 'compound' && target !== source && isAncestorOrSelf(source, target)) {
        // Declared for the whole region: drawn from each of its states (from the target itself it changes nothing).
        const child = childBelow(source, target);
        for (const from of Object.values(source.states)) if (from !== child || t.reenter) regionWide.push(() => addEdge(from, target, label));
      } else addEdge(source, target, label);
    }
  }
  // After the states' own transitions, so that an edge's labels read the state's own first.
  for (const add of regionWide) add();

  const lines = ['stateDiagram-v2'];
  const blockOf = (e: Edge) => (e.from === e.to ? (e.from.parent ?? e.from) : commonAncestor(e.from, e.to));
  const writeEdges = (block: AnyStateNode, indent: string) => {
    for (const e of edges) if (blockOf(e) === block) lines.push(`${indent}${mermaidId(e.from)} --> ${mermaidId(e.to)} : ${e.labels.join('<br>')}`);
  };
  const writeChildren = (node: AnyStateNode, indent: string) => {
    const children = Object.values(node.states);
    if (node.type === 'parallel') {
      children.forEach((child, i) => {
        if (i > 0) lines.push(`${indent}--`);
        writeState(child, indent);
      });
    } else {
      const initial = node.initial?.target?.[0] as AnyStateNode | undefined;
      if (initial) lines.push(`${indent}[*] --> ${mermaidId(initial)}`);
      for (const child of children) writeState(child, indent);
      for (const child of children) if (child.type === 'final') lines.push(`${indent}${mermaidId(child)} --> [*]`);
    }
    writeEdges(node, indent);
  };
  const writeState = (node: AnyStateNode, indent: string) => {
    const id = mermaidId(node);
    const name = node.key === id ? id : `"${node.key}" as ${id}`;
    if (node.type === 'compound' || node.type === 'parallel') {
      lines.push(`${indent}state ${name} {`);
      writeChildren(node, `${indent}  `);
      lines.push(`${indent}}`);
    } else lines.push(`${indent}state ${name}`);
  };

  const root = machine.root;
  // A parallel root is drawn as one composite state (Mermaid's `--` separates regions only inside one).
  if (root.type === 'parallel') {
    writeState(root, '  ');
    writeEdges(root, '  ');
  } else writeChildren(root, '  ');

  const statePath = (node: AnyStateNode) => (node.path.length === 0 ? node.machine.id : node.path.join('.'));
  return {
    mermaid: lines.join('\n'),
    inPlace: [...inPlace].map(([node, labels]) => ({ state: node.type === 'atomic' || node.type === 'final' ? statePath(node) : `${statePath(node)} (any state)`, labels })),
  };
}

/** What goes between a machine's markers in the docs: the Mermaid block and the transitions that change no state. */
export function diagramBlock(machine: AnyStateMachine): string {
  const { mermaid, inPlace } = machineDiagram(machine);
  const listed = inPlace.map(({ state, labels }) => `- \`${state}\`: ${labels.map((l) => `\`${l}\``).join(', ')}`);
  return [
    '```mermaid',
    mermaid,
    '```',
    '',
    `Transitions that change no state (actions only), generated with the diagram by \`npm run docs:machines\`:`,
    '',
    ...listed,
  ].join('\n');
}

export const openMarker = (name: string) => `<!-- machine:${name} -->`;
export const closeMarker = (name: string) => `<!-- /machine:${name} -->`;

/** The text between a machine's markers in a document, or null when the document has none. */
export function blockIn(doc: string, name: string): string | null {
  const start = doc.indexOf(openMarker(name));
  const end = doc.indexOf(closeMarker(name));
  if (start < 0 || end < 0 || end < start) return null;
  return doc.slice(start + openMarker(name).length, end).replace(/^\n/, '').replace(/\n$/, '');
}

/** The document with the text between a machine's markers replaced by `block`. */
export function withBlock(doc: string, name: string, block: string): string {
  const start = doc.indexOf(openMarker(name));
  const end = doc.indexOf(closeMarker(name));
  if (start < 0 || end < start) throw new Error(`no ${openMarker(name)} … ${closeMarker(name)} block`);
  return `${doc.slice(0, start + openMarker(name).length)}\n${block}\n${doc.slice(end)}`;
}

async function main(argv: readonly string[]): Promise<void> {
  const write = argv.includes('--write');
  const names = argv.filter((a) => !a.startsWith('-'));
  for (const name of names) if (!(name in MACHINES)) throw new Error(`unknown machine ${name}: one of ${Object.keys(MACHINES).join(', ')}`);
  if (!write) {
    if (names.length === 0) throw new Error(`name a machine (${Object.keys(MACHINES).join(', ')}) or pass --write`);
    for (const name of names) process.stdout.write(`${diagramBlock(await MACHINES[name]!())}\n`);
    return;
  }
  const wanted = names.length > 0 ? names : Object.keys(MACHINES);
  for (const file of readdirSync(DOCS_DIR).filter((f) => f.endsWith('.md')).sort()) {
    const url = new URL(file, DOCS_DIR);
    let doc = readFileSync(url, 'utf8');
    const drawn = wanted.filter((name) => blockIn(doc, name) !== null);
    if (drawn.length === 0) continue;
    for (const name of drawn) doc = withBlock(doc, name, diagramBlock(await MACHINES[name]!()));
    writeFileSync(url, doc);
    console.log(`docs/${file}: ${drawn.join(', ')}`);
  }
}

if (import.meta.main) {
  exitOnHelp(() => docComment(import.meta.url));
  await main(process.argv.slice(2));
}
