import { readdirSync, readFileSync } from 'node:fs';
import { parseAllDocuments, parse as parseYaml } from 'yaml';

const root = new URL('../../', import.meta.url);
export const repoFile = (path: string): string => readFileSync(new URL(path, root), 'utf8');

/** One Dockerfile instruction: its keyword, upper-case, and the rest of its line (continuations joined). */
export interface Instruction {
  keyword: string;
  args: string;
}

/** A Dockerfile, stage by stage: each stage opens with its FROM. Comments and blank lines are dropped. */
export function dockerfileStages(text: string): Instruction[][] {
  const instructions: Instruction[] = [];
  let pending = '';
  for (const raw of text.split('\n')) {
    const line = raw.trim();
    if (pending === '' && (line === '' || line.startsWith('#'))) continue;
    pending += `${line.replace(/\\$/, '').trim()} `;
    if (line.endsWith('\\')) continue;
    const m = /^(\S+)\s+(.*)$/.exec(pending.trim());
    if (!m) throw new Error(`unreadable Dockerfile line: ${pending}`);
    instructions.push({ keyword: m[1]!.toUpperCase(), args: m[2]! });
    pending = '';
  }
  const stages: Instruction[][] = [];
  for (const instruction of instructions) {
    if (instruction.keyword === 'FROM') stages.push([]);
    if (stages.length === 0) throw new Error(`Dockerfile instruction before FROM: ${instruction.keyword}`);
    stages.at(-1)!.push(instruction);
  }
  return stages;
}

/** `KEY=value KEY2="value 2"` (an ENV's arguments) as a record. */
export function envPairs(args: string): Record<string, string> {
  return Object.fromEntries([...args.matchAll(/([A-Za-z_][A-Za-z0-9_]*)=("[^"]*"|\S*)/g)].map((m) => [m[1]!, m[2]!.replace(/^"|"$/g, '')]));
}

/** docker-compose.yml, with its `<<: *anchor` merges resolved as Compose does. */
export function composeFile(): { services: Record<string, Record<string, unknown>> } {
  return parseYaml(repoFile('docker-compose.yml'), { merge: true }) as { services: Record<string, Record<string, unknown>> };
}

export interface K8sObject {
  apiVersion: string;
  kind: string;
  metadata: { name: string; labels?: Record<string, string> };
  [field: string]: unknown;
}

/** Every object of every YAML file in deploy/k8s, with the file it came from. */
export function k8sObjects(): Array<{ file: string; object: K8sObject }> {
  const dir = new URL('deploy/k8s/', root);
  return readdirSync(dir)
    .filter((f) => f.endsWith('.yaml'))
    .flatMap((file) =>
      parseAllDocuments(readFileSync(new URL(file, dir), 'utf8')).map((doc) => {
        if (doc.errors.length > 0) throw new Error(`deploy/k8s/${file}: ${doc.errors[0]!.message}`);
        return { file, object: doc.toJS() as K8sObject };
      }),
    );
}

/** The duration Compose reads in `stop_grace_period` ("35s", "1m30s"), in ms. */
export function composeDurationMs(value: string): number {
  const parts = [...value.matchAll(/(\d+(?:\.\d+)?)(ms|s|m|h)/g)];
  if (parts.length === 0 || parts.map((p) => p[0]).join('') !== value) throw new Error(`not a Compose duration: ${value}`);
  const unit = { ms: 1, s: 1000, m: 60_000, h: 3_600_000 } as const;
  return parts.reduce((ms, p) => ms + Number(p[1]) * unit[p[2] as keyof typeof unit], 0);
}

/**
 * How long a runtime may take to start: what the deployment allows it (deploy/k8s/deployment.yaml's
 * startupProbe, periodSeconds × failureThreshold). Tests wait that long for a runtime process's banner:
 * a bound for a process that hangs, not a speed they assert — on a loaded machine a start takes longer.
 */
export function startupAllowanceMs(): number {
  const deployment = k8sObjects().find(({ object }) => object.kind === 'Deployment')!.object as unknown as {
    spec: { template: { spec: { containers: Array<{ startupProbe?: { periodSeconds: number; failureThreshold: number } }> } } };
  };
  const probe = deployment.spec.template.spec.containers.find((c) => c.startupProbe)!.startupProbe!;
  return probe.periodSeconds * probe.failureThreshold * 1000;
}
