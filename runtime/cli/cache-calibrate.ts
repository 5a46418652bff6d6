import { readFileSync } from 'node:fs';
import { parseArgs } from 'node:util';
import { createModels } from '../../adapters/models/model-provider.ts';
import { writeFileSync } from 'node:fs';
import { calibrate, LabelledPair, measureStrict, PROFILE_PRECISION, SIMILARITY_PROFILES, SPLIT_METHOD, STRICT_FIGURES_FILE, writeCalibration, type KindScore } from '../../adapters/semantic-cache/semantic-cache-calibration.ts';
import { normalize } from '../../adapters/semantic-cache/semantic-cache.ts';
import type { MemoryEmbedderPort } from '../../machines/memory/memory.port.ts';
import { ConfigError, loadConfig } from '../config.ts';
import { exitOnHelp } from './usage.ts';

/**
 * `npm run cache:calibrate -- --pairs FILE`: embeds labelled pairs (JSONL: a, b, same, kind?) with
 * the configured embedder, picks each profile's threshold for the whole hit decision (threshold +
 * near-miss guard) on the training part, and writes it with its held-out figures.
 */
export function readPairs(file: string): LabelledPair[] {
  let text: string;
  try {
    text = readFileSync(file, 'utf8');
  } catch (err) {
    throw new ConfigError(`${file}: cannot read the pairs file (${(err as NodeJS.ErrnoException).code ?? (err as Error).message})`);
  }
  const pairs = text
    .split('\n')
    .map((line, i) => [line.trim(), i + 1] as const)
    .filter(([line]) => line !== '')
    .map(([line, n]) => {
      let json: unknown;
      try {
        json = JSON.parse(line);
      } catch {
        throw new ConfigError(`${file}:${n}: not JSON (one {"a", "b", "same"} object per line)`);
      }
      const parsed = LabelledPair.safeParse(json);
      if (!parsed.success) throw new ConfigError(`${file}:${n}: expected {"a": string, "b": string, "same": boolean, "kind"?: string}`);
      return parsed.data;
    });
  if (pairs.length === 0) throw new ConfigError(`${file}: no labelled pairs`);
  return pairs;
}

/** The configured models (Mistral with a key, the offline ones without), as the runtime makes them. */
export function configuredModels(config = loadConfig()) {
  return createModels({ apiKey: config.MISTRAL_API_KEY, baseUrl: config.MISTRAL_BASE_URL, agentModelId: config.MISTRAL_AGENT_MODEL, subagentModelId: config.MISTRAL_SUBAGENT_MODEL, env: config.KOHAMI_ENV });
}

/** The configured embedder (Mistral with a key, the local embedder without). */
export function configuredEmbedder(): MemoryEmbedderPort {
  return configuredModels().embedder;
}

/** Each pair's cosine similarity under the embedder, every distinct question embedded once. */
export async function pairSimilarities(embedder: MemoryEmbedderPort, pairs: LabelledPair[]): Promise<number[]> {
  const texts = [...new Set(pairs.flatMap((p) => [p.a, p.b]))];
  const vectors = new Map<string, Float32Array>();
  for (let i = 0; i < texts.length; i += 64) {
    const batch = texts.slice(i, i + 64);
    (await embedder.embed(batch)).forEach((v, j) => vectors.set(batch[j]!, normalize(v) ?? new Float32Array(v.length)));
  }
  const cosine = (a: Float32Array, b: Float32Array) => a.reduce((sum, x, i) => sum + x * b[i]!, 0);
  return pairs.map((p) => cosine(vectors.get(p.a)!, vectors.get(p.b)!));
}

export const KIND_HEADER =
  '| kind | label | pairs | hits | hit rate (same) or share refused (near-miss) | about health (never served) | hit rate outside health |\n|---|---|---:|---:|---:|---:|---:|';

/**
 * Markdown rows of per-kind figures: hit rate for same-meaning kinds, share refused for near-miss
 * kinds, and how many pairs are about health — never served, so a same-meaning kind's rate is also
 * given over the others.
 */
export function kindRows(byKind: Record<string, KindScore>): string[] {
  return Object.entries(byKind)
    .sort(([a, x], [b, y]) => Number(y.same) - Number(x.same) || a.localeCompare(b))
    .map(([kind, k]) => {
      const health = k.health ?? 0;
      const outside = k.same ? (k.pairs > health ? (k.hits / (k.pairs - health)).toFixed(3) : '—') : '—';
      return k.same
        ? `| ${kind} | same | ${k.pairs} | ${k.hits} | hit rate ${(k.hits / k.pairs).toFixed(3)} | ${health} | ${outside} |`
        : `| ${kind} | near-miss | ${k.pairs} | ${k.hits} false | refused ${(1 - k.hits / k.pairs).toFixed(3)} | ${health} | ${outside} |`;
    });
}

const USAGE = `usage: npm run cache:calibrate -- --pairs FILE.jsonl --unseen FILE.jsonl
  picks the permissive and aggressive profiles' thresholds for the configured embedder on labelled pairs
  (one {"a", "b", "same", "kind"?} per line), measures them on their held-out part and on --unseen, pairs
  no rule of the guard was shaped on (the project's: calibration/pairs-blind-5.fr.jsonl), whose precision
  decides whether the profile is offered; writes SEMANTIC_CACHE_CALIBRATION_FILE
       npm run cache:calibrate -- --strict --unseen FILE.jsonl [--unseen FILE.jsonl …]
  measures the strict profile (the same question by its words: no embedder, no threshold) on each set its
  rules never saw; offered when each reaches its promise; writes adapters/semantic-cache/strict-profile.json`;

/** `--strict`: strict's figures on each unseen set, one row each. */
function calibrateStrict(files: string[]): void {
  const figures = { ...measureStrict(files.map((set) => ({ set, pairs: readPairs(set) }))), measuredAt: new Date().toISOString() };
  writeFileSync(STRICT_FIGURES_FILE, `${JSON.stringify(figures, null, 2)}\n`);
  console.log(`strict (promise ${figures.promise} on every set): ${figures.offered ? 'offered' : 'not offered'}\n`);
  console.log('| set | pairs | precision | hit rate | outside health | false hits |\n|---|---:|---:|---:|---:|---:|');
  for (const s of figures.sets) console.log(`| ${s.set} | ${s.pairs} | ${s.precision.toFixed(3)} | ${s.hitRate.toFixed(3)} | ${(s.hitRateOutsideHealth ?? 0).toFixed(3)} | ${s.falseHits} / ${s.hits} |`);
}

async function main(): Promise<void> {
  const { values } = parseArgs({ options: { pairs: { type: 'string' }, unseen: { type: 'string', multiple: true }, strict: { type: 'boolean' } } });
  if (values.strict) {
    if (!values.unseen?.length || values.pairs) throw new ConfigError(USAGE);
    return calibrateStrict(values.unseen);
  }
  if (!values.pairs || values.unseen?.length !== 1) throw new ConfigError(USAGE);
  const pairs = readPairs(values.pairs);
  const unseenSet = values.unseen[0]!;
  const unseen = readPairs(unseenSet);
  const embedder = configuredEmbedder();
  const result = calibrate(pairs, await pairSimilarities(embedder, pairs), { set: unseenSet, pairs: unseen, similarity: await pairSimilarities(embedder, unseen) });
  writeCalibration(embedder.modelId, { ...result, calibratedAt: new Date().toISOString() }, loadConfig().SEMANTIC_CACHE_CALIBRATION_FILE);
  const same = pairs.filter((p) => p.same).length;
  console.log(`\ncalibrated ${embedder.modelId} on ${pairs.length} pairs (${same} same, ${pairs.length - same} different)`);
  console.log(`${SPLIT_METHOD}: thresholds picked on ${result.split.train} training pairs, measured on ${result.split.heldOut} held-out pairs`);
  console.log(`and on the ${unseen.length} pairs of ${unseenSet}, written after the rules: their precision decides "offered"\n`);
  console.log('| profile | promise | threshold | unseen precision | unseen hit rate | outside health | unseen false hits | offered | (held-out precision / hit rate) | (train precision / hit rate) |');
  console.log('|---|---:|---:|---:|---:|---:|---:|---|---:|---:|');
  for (const profile of SIMILARITY_PROFILES) {
    const m = result[profile];
    console.log(
      `| ${profile} | ${PROFILE_PRECISION[profile]} | ${m.threshold.toFixed(4)} | ${m.unseen.precision.toFixed(3)} | ${m.unseen.hitRate.toFixed(3)} | ${(m.unseen.hitRateOutsideHealth ?? 0).toFixed(3)} | ${m.unseen.falseHits} / ${m.unseen.hits} | ${m.offered ? 'yes' : 'no'} | ${m.heldOut.precision.toFixed(3)} / ${m.heldOut.hitRate.toFixed(3)} | ${m.train.precision.toFixed(3)} / ${m.train.hitRate.toFixed(3)} |`,
    );
  }
  for (const profile of SIMILARITY_PROFILES) {
    const rows = kindRows(result[profile].heldOutByKind);
    if (rows.length === 0) continue;
    console.log(`\n${profile}, held-out pairs per kind:\n\n${KIND_HEADER}`);
    for (const row of rows) console.log(row);
  }
}

if (import.meta.url === `file://${process.argv[1]}`) {
  exitOnHelp(USAGE);
  main().catch((err: unknown) => {
    process.stderr.write(`${err instanceof ConfigError ? err.message : `cache:calibrate failed: ${(err as Error).message}`}\n`);
    process.exit(2);
  });
}
