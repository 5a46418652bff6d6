import { readFileSync } from 'node:fs';
import { parseArgs } from 'node:util';
import { createModels } from '../adapters/models/model-provider.ts';
import { calibrate, LabelledPair, PROFILE_PRECISION, writeCalibration } from '../adapters/semantic-cache-calibration.ts';
import { normalize } from '../adapters/semantic-cache.ts';
import { ConfigError, loadConfig } from './config.ts';

/**
 * `npm run cache:calibrate -- --pairs FILE`: embeds labelled pairs (JSONL: a, b, same) with the
 * configured embedder, measures the whole hit decision (threshold + near-miss guard), and writes
 * each profile's threshold for that embedding model into the calibration file.
 */
export function readPairs(file: string): LabelledPair[] {
  return readFileSync(file, 'utf8')
    .split('\n')
    .map((line, i) => [line.trim(), i + 1] as const)
    .filter(([line]) => line !== '')
    .map(([line, n]) => {
      let json: unknown;
      try {
        json = JSON.parse(line);
      } catch {
        throw new ConfigError(`${file}:${n}: not JSON`);
      }
      const parsed = LabelledPair.safeParse(json);
      if (!parsed.success) throw new ConfigError(`${file}:${n}: expected {"a": string, "b": string, "same": boolean}`);
      return parsed.data;
    });
}

async function main(): Promise<void> {
  const { values } = parseArgs({ options: { pairs: { type: 'string' } } });
  if (!values.pairs) throw new ConfigError('usage: npm run cache:calibrate -- --pairs FILE.jsonl');
  const pairs = readPairs(values.pairs);
  const config = loadConfig();
  const { embedder } = createModels({ apiKey: config.MISTRAL_API_KEY, baseUrl: config.MISTRAL_BASE_URL, agentModelId: config.MISTRAL_AGENT_MODEL, subagentModelId: config.MISTRAL_SUBAGENT_MODEL, env: config.KOHAMI_ENV });
  const texts = [...new Set(pairs.flatMap((p) => [p.a, p.b]))];
  const vectors = new Map<string, Float32Array>();
  for (let i = 0; i < texts.length; i += 64) {
    const batch = texts.slice(i, i + 64);
    (await embedder.embed(batch)).forEach((v, j) => vectors.set(batch[j]!, normalize(v) ?? new Float32Array(v.length)));
  }
  const cosine = (a: Float32Array, b: Float32Array) => a.reduce((sum, x, i) => sum + x * b[i]!, 0);
  const result = calibrate(pairs, pairs.map((p) => cosine(vectors.get(p.a)!, vectors.get(p.b)!)));
  writeCalibration(embedder.modelId, { ...result, calibratedAt: new Date().toISOString() });
  const same = pairs.filter((p) => p.same).length;
  console.log(`\ncalibrated ${embedder.modelId} on ${pairs.length} pairs (${same} same, ${pairs.length - same} different)\n`);
  console.log('| profile | required precision | threshold | precision | hit rate |');
  console.log('|---|---:|---:|---:|---:|');
  for (const profile of ['strict', 'permissive', 'aggressive'] as const) {
    const m = result[profile];
    console.log(`| ${profile} | ${PROFILE_PRECISION[profile]} | ${m.threshold.toFixed(4)} | ${m.precision.toFixed(3)} | ${m.hitRate.toFixed(3)} |`);
  }
}

if (import.meta.url === `file://${process.argv[1]}`) {
  main().catch((err: unknown) => {
    process.stderr.write(`${err instanceof ConfigError ? err.message : `cache:calibrate failed: ${(err as Error).message}`}\n`);
    process.exit(2);
  });
}
