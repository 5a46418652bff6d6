import { parseArgs } from 'node:util';
import { ACTIVE_PROFILES, isHeldOut, readCalibrations, score, scoreByKind, scorePairs, isHit, type ActiveProfile, type ModelCalibration } from '../../adapters/semantic-cache/semantic-cache-calibration.ts';
import type { MemoryEmbedderPort } from '../../machines/memory/memory.port.ts';
import { configuredEmbedder, KIND_HEADER, kindRows, pairSimilarities, readPairs } from './cache-calibrate.ts';
import { exitOnHelp } from './usage.ts';
import { ConfigError, loadConfig } from '../config.ts';
import { guardDisagreement, questionGuard, type QuestionGuard } from '../../machines/cache/near-miss-guard.ts';

/**
 * `npm run cache:evaluate -- --pairs FILE.jsonl [--profile strict|permissive|aggressive] [--held-out | --training] [--explain]`:
 * a deployer's check of the semantic cache on their own labelled pairs. Embeds them with the
 * configured embedder and applies the CURRENT calibrated thresholds, near-miss guard and health
 * refusal — no recalibration. `--held-out` keeps only the pairs the fixed split holds out (those a
 * calibration on this file never tuned on), `--training` the others: the part a rule may be tuned on
 * without reading the held-out figures. `--explain` lists every same-meaning pair outside health that is
 * not served, with why: below the threshold, or the part of the guard that refuses it and on what. The last line is `<profile>: precision P, hit rate H on N pairs` (strict unless
 * `--profile` names another).
 */
const USAGE = 'usage: npm run cache:evaluate -- --pairs FILE.jsonl [--profile strict|permissive|aggressive] [--held-out | --training] [--explain]';
const MAX_EXAMPLES = 10;

export interface EvaluateIo {
  out: (line: string) => void;
  err: (line: string) => void;
  embedder?: () => MemoryEmbedderPort;
  calibrations?: () => Record<string, ModelCalibration>;
}

const shown = (xs: readonly string[]) => xs.join(' ') || '∅';
/** The guard's refusing part and what differs under it: the keys each side alone has, or both sides' values. */
function explain(a: QuestionGuard, b: QuestionGuard): string {
  const part = guardDisagreement(a, b)!;
  if (part === 'content') {
    const [ka, kb] = [a.content.key.split(' '), b.content.key.split(' ')];
    return `content: ${shown(ka.filter((k) => !kb.includes(k)))} / ${shown(kb.filter((k) => !ka.includes(k)))}`;
  }
  if (part === 'roles' || part === 'order' || part === 'phrases') return `${part}: ${shown(a[part])} / ${shown(b[part])}`;
  if (part in a.details) {
    const [x, y] = [a.details[part as keyof QuestionGuard['details']], b.details[part as keyof QuestionGuard['details']]];
    return `${part}: ${Array.isArray(x) ? shown(x) : String(x)} / ${Array.isArray(y) ? shown(y) : String(y)}`;
  }
  return part;
}

/** Runs the command; resolves to its exit code (2 on bad input, said in one line on `err`). */
export async function evaluateMain(argv: string[], io: EvaluateIo): Promise<number> {
  try {
    let values: { pairs?: string; profile?: string; 'held-out'?: boolean; training?: boolean; explain?: boolean };
    try {
      ({ values } = parseArgs({ args: argv, options: { pairs: { type: 'string' }, profile: { type: 'string' }, 'held-out': { type: 'boolean' }, training: { type: 'boolean' }, explain: { type: 'boolean' } } }));
    } catch (err) {
      throw new ConfigError(`${(err as Error).message}; ${USAGE}`);
    }
    if (!values.pairs) throw new ConfigError(USAGE);
    if (values['held-out'] && values.training) throw new ConfigError(`--held-out and --training name the two parts of the split: one at most; ${USAGE}`);
    if (values.profile !== undefined && !ACTIVE_PROFILES.includes(values.profile as ActiveProfile)) {
      throw new ConfigError(`unknown profile "${values.profile}": strict, permissive or aggressive`);
    }
    const profiles = values.profile ? [values.profile as ActiveProfile] : [...ACTIVE_PROFILES].reverse();
    const all = readPairs(values.pairs);
    const pairs = values['held-out'] ? all.filter(isHeldOut) : values.training ? all.filter((p) => !isHeldOut(p)) : all;
    if (pairs.length === 0) throw new ConfigError(`${values.pairs}: no ${values.training ? 'training' : 'held-out'} pairs`);
    const embedder = (io.embedder ?? configuredEmbedder)();
    const calibration = (io.calibrations ?? (() => readCalibrations(loadConfig().SEMANTIC_CACHE_CALIBRATION_FILE)))()[embedder.modelId];
    if (!calibration) throw new ConfigError(`no calibration for embedding model ${embedder.modelId}: run npm run cache:calibrate -- --pairs FILE --unseen FILE first`);
    const scored = scorePairs(pairs, await pairSimilarities(embedder, pairs));
    const same = pairs.filter((p) => p.same).length;
    const part = values['held-out'] ? ` held out of ${all.length}` : values.training ? ` for training of ${all.length}` : '';
    io.out(`cache:evaluate — ${embedder.modelId}, ${pairs.length} pairs${part} (${same} same, ${pairs.length - same} different), thresholds calibrated ${calibration.calibratedAt}`);
    const health = scored.filter((p) => p.health);
    if (health.length > 0) io.out(`${health.length} pair${health.length === 1 ? '' : 's'} about health (${health.filter((p) => p.same).length} same-meaning): never served from the cache, counted as misses`);
    // Strict is printed last, so its summary line closes the output.
    let summary = '';
    for (const profile of profiles) {
      const { threshold, offered } = calibration[profile];
      const s = score(scored, threshold);
      io.out('');
      io.out(`${profile} (threshold ${threshold.toFixed(4)}${offered ? '' : `, not offered: its precision on ${calibration.unseen.set}, written after the rules, missed its promise`})`);
      io.out(`  pairs ${s.pairs}, precision ${s.precision.toFixed(3)}, paraphrase hit rate ${s.hitRate.toFixed(3)}, hits ${s.hits}, false hits ${s.falseHits}`);
      if (health.length > 0) io.out(`  paraphrase hit rate outside health ${(s.hitRateOutsideHealth ?? 0).toFixed(3)} (${s.positivesOutsideHealth} same-meaning pairs)`);
      // A file that marks its longer sentences (`"long": true`) gets each part's figures: their promises differ.
      if (scored.some((p) => p.long)) {
        for (const [part, subset] of [['short questions', scored.filter((p) => !p.long)], ['longer sentences', scored.filter((p) => p.long)]] as const) {
          const t = score(subset, threshold);
          io.out(`  ${part}: pairs ${t.pairs}, precision ${t.precision.toFixed(3)}, paraphrase hit rate ${t.hitRate.toFixed(3)} (${(t.hitRateOutsideHealth ?? 0).toFixed(3)} outside health), hits ${t.hits}, false hits ${t.falseHits}`);
        }
      }
      const falseHits = scored.filter((p) => !p.same && isHit(p, threshold));
      for (const p of falseHits.slice(0, MAX_EXAMPLES)) io.out(`  false hit${p.kind ? ` [${p.kind}]` : ''} (${p.similarity.toFixed(3)}): « ${p.a} » / « ${p.b} »`);
      if (falseHits.length > MAX_EXAMPLES) io.out(`  … and ${falseHits.length - MAX_EXAMPLES} more`);
      if (values.explain) {
        const missed = scored.filter((p) => p.same && !p.health && !isHit(p, threshold));
        io.out(`  ${missed.length} same-meaning pair${missed.length === 1 ? '' : 's'} outside health not served:`);
        for (const p of missed) {
          const why = p.similarity < threshold ? 'below the threshold' : explain(questionGuard(p.a), questionGuard(p.b));
          io.out(`  refused${p.kind ? ` [${p.kind}]` : ''} (${p.similarity.toFixed(3)}) ${why}: « ${p.a} » / « ${p.b} »`);
        }
      }
      const rows = kindRows(scoreByKind(scored, threshold));
      if (rows.length > 0) for (const line of [...KIND_HEADER.split('\n'), ...rows]) io.out(`  ${line}`);
      summary = `${profile}: precision ${s.precision.toFixed(3)}, hit rate ${s.hitRate.toFixed(3)} on ${s.pairs} pairs`;
    }
    io.out('');
    io.out(summary);
    return 0;
  } catch (err) {
    io.err(err instanceof ConfigError ? err.message : `cache:evaluate failed: ${(err as Error).message}`);
    return 2;
  }
}

if (import.meta.url === `file://${process.argv[1]}`) {
  exitOnHelp(USAGE);
  evaluateMain(process.argv.slice(2), { out: (l) => process.stdout.write(`${l}\n`), err: (l) => process.stderr.write(`${l}\n`) }).then((code) => {
    process.exitCode = code;
  });
}
