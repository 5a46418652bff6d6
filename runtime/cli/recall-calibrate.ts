import { parseArgs } from 'node:util';
import { calibrateRecallFloor, f1, RECALL_FLOOR_RULE, RECALL_SPLIT_METHOD, RECALL_TOP, writeRecallFloor } from '../../adapters/memory/recall-floor.ts';
import { ConfigError } from '../config.ts';
import { configuredEmbedder, pairSimilarities, readPairs } from './cache-calibrate.ts';
import { exitOnHelp } from './usage.ts';

/**
 * `npm run recall:calibrate -- --pairs FILE`: the semantic cache's calibration, for recall's relevance
 * floor. Embeds labelled turn → fact pairs (JSONL: a = a senior's turn, b = one of their facts, same =
 * the fact answers it, kind?) with the configured embedder, picks the floor on the tuning turns and
 * writes it with its held-out figures to adapters/memory/recall-floor.calibration.json.
 */
const USAGE = `usage: npm run recall:calibrate -- --pairs FILE.jsonl
  picks recall's relevance floor for the configured embedder on labelled turn/fact pairs
  and writes it to adapters/memory/recall-floor.calibration.json`;

async function main(): Promise<void> {
  const { values } = parseArgs({ options: { pairs: { type: 'string' } } });
  if (!values.pairs) throw new ConfigError(USAGE);
  const pairs = readPairs(values.pairs);
  const embedder = configuredEmbedder();
  const result = calibrateRecallFloor(pairs, await pairSimilarities(embedder, pairs));
  writeRecallFloor(embedder.modelId, { ...result, calibratedAt: new Date().toISOString() });
  const relevant = pairs.filter((p) => p.same).length;
  const { split, heldOut: h, heldOutNoFloor: none, tuning: t } = result;
  console.log(`\ncalibrated recall's floor for ${embedder.modelId} on ${pairs.length} pairs (${relevant} relevant, ${pairs.length - relevant} unrelated)`);
  console.log(`${RECALL_SPLIT_METHOD}: ${RECALL_FLOOR_RULE} (${split.tuning} pairs of ${split.tuningTurns} turns), measured on ${split.heldOut} pairs of ${split.heldOutTurns} held-out turns\n`);
  console.log('| floor | held-out precision | held-out recall | held-out F1 | facts kept / unrelated among them | offered | (tuning precision / recall) |');
  console.log('|---|---:|---:|---:|---:|---|---:|');
  console.log(`| none | ${none.precision.toFixed(3)} | ${none.hitRate.toFixed(3)} | ${f1(none).toFixed(3)} | ${none.hits} / ${none.falseHits} | | |`);
  console.log(
    `| ${result.floor.toFixed(4)} | ${h.precision.toFixed(3)} | ${h.hitRate.toFixed(3)} | ${f1(h).toFixed(3)} | ${h.hits} / ${h.falseHits} | ${result.offered ? 'yes' : 'no'} | ${t.precision.toFixed(3)} / ${t.hitRate.toFixed(3)} |`,
  );
  console.log(`\nheld-out turns searched as a turn is (the top ${RECALL_TOP} of the senior's facts, then the floor):\n`);
  console.log('| floor | turns with an answer: answer kept | turns without: given no fact | facts kept / unrelated among them |');
  console.log('|---|---:|---:|---:|');
  for (const [name, s] of [['none', result.heldOutTurns.noFloor], [result.floor.toFixed(4), result.heldOutTurns.floor]] as const) {
    console.log(`| ${name} | ${s.answerKept} of ${s.withAnswer} | ${s.givenNothing} of ${s.withoutAnswer} | ${s.factsKept} / ${s.unrelatedKept} |`);
  }
}

if (import.meta.url === `file://${process.argv[1]}`) {
  exitOnHelp(USAGE);
  main().catch((err: unknown) => {
    process.stderr.write(`${err instanceof ConfigError ? err.message : `recall:calibrate failed: ${(err as Error).message}`}\n`);
    process.exit(2);
  });
}
