import { parseArgs } from 'node:util';
import { ACTIVE_PROFILES, isCandidate, isHeldOut, MIN_THRESHOLD, readCalibrations, readStrictFigures, score, scoreByKind, scorePairs, isHit, type ActiveProfile, type ModelCalibration, type ScoredPair } from '../../adapters/semantic-cache/semantic-cache-calibration.ts';
import type { CacheVerifierPort } from '../../machines/cache/cache-verifier.port.ts';
import type { MemoryEmbedderPort } from '../../machines/memory/memory.port.ts';
import { configuredEmbedder, configuredModels, KIND_HEADER, kindRows, pairSimilarities, readPairs } from './cache-calibrate.ts';
import { exitOnHelp } from './usage.ts';
import { MistralSmallCacheVerifier } from '../../adapters/subagents/mistral-small-cache-verifier.ts';
import { strictKey } from '../../machines/cache/strict-key.ts';
import { withDeadline } from '../../machines/session/deadline.ts';
import { ConfigError, loadConfig } from '../config.ts';
import { guardDisagreement, questionGuard, type QuestionGuard } from '../../machines/cache/near-miss-guard.ts';

/**
 * `npm run cache:evaluate -- --pairs FILE.jsonl [--profile strict|permissive|aggressive] [--held-out | --training] [--explain] [--verify]`:
 * a deployer's check of the semantic cache on their own labelled pairs. `strict` compares the questions'
 * strict keys; the similarity profiles embed them with the configured embedder and apply the CURRENT
 * calibrated thresholds, near-miss guard and health refusal — no recalibration. `--verify` adds `strict
 * + model check` (SEMANTIC_CACHE_VERIFY=model): every permissive candidate strict does not serve is put
 * to the sub-agent model, as the cache would (needs MISTRAL_API_KEY). `--held-out` keeps only the pairs the fixed split holds out (those a
 * calibration on this file never tuned on), `--training` the others: the part a rule may be tuned on
 * without reading the held-out figures. `--explain` lists every same-meaning pair outside health that is
 * not served, with why: below the threshold, or the part of the guard that refuses it and on what. The last line is `<profile>: precision P, hit rate H on N pairs` (strict unless
 * `--profile` names another).
 */
const USAGE = 'usage: npm run cache:evaluate -- --pairs FILE.jsonl [--profile strict|permissive|aggressive] [--held-out | --training] [--explain] [--verify]';
const MAX_EXAMPLES = 10;

export interface EvaluateIo {
  out: (line: string) => void;
  err: (line: string) => void;
  embedder?: () => MemoryEmbedderPort;
  calibrations?: () => Record<string, ModelCalibration>;
  /** `--verify`'s model check (the configured sub-agent model by default). */
  verifier?: () => CacheVerifierPort;
}

/** How a profile decides a pair, and what its heading says. */
interface Decision {
  name: string;
  heading: string;
  threshold: number;
  hit: (p: ScoredPair) => boolean;
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

/** The model check the runtime would make with SEMANTIC_CACHE_VERIFY=model: the configured sub-agent model. */
function configuredVerifier(): CacheVerifierPort {
  const config = loadConfig();
  if (!config.MISTRAL_API_KEY) throw new ConfigError('--verify asks the sub-agent model: set MISTRAL_API_KEY');
  return new MistralSmallCacheVerifier(configuredModels(config).subagent, 2 * config.SEMANTIC_CACHE_VERIFY_BUDGET_MS);
}

/**
 * `strict + model check`: strict's hits, and each permissive candidate strict does not serve put to the
 * model under the runtime's bound (a timeout or an error is a miss, as in the cache). One call at a time:
 * a deployer's key, not a load test. The calls' latencies are reported, since the bound decides hits.
 */
async function verified(scored: ScoredPair[], threshold: number, verifier: CacheVerifierPort, io: EvaluateIo): Promise<Decision> {
  const budgetMs = loadConfig().SEMANTIC_CACHE_VERIFY_BUDGET_MS;
  const yes = new Set<ScoredPair>();
  const latencies: number[] = [];
  let failed = 0;
  for (const p of scored) {
    if (p.strict || !isCandidate(p, threshold)) continue;
    const started = performance.now();
    try {
      if (await withDeadline((signal) => verifier.sameQuestion({ cached: p.a, asked: p.b, previous: null }, signal), budgetMs, new AbortController().signal)) yes.add(p);
    } catch {
      failed += 1;
    }
    latencies.push(performance.now() - started);
  }
  latencies.sort((x, y) => x - y);
  const at = (q: number) => (latencies.length === 0 ? 0 : latencies[Math.min(latencies.length - 1, Math.floor(q * latencies.length))]!);
  io.out('');
  io.out(`model check: ${latencies.length} candidate${latencies.length === 1 ? '' : 's'} put to the model, ${yes.size} confirmed, ${failed} without a verdict in ${budgetMs} ms (misses); latency p50 ${at(0.5).toFixed(0)} ms, p95 ${at(0.95).toFixed(0)} ms`);
  return { name: 'strict + model check', heading: `strict + model check (candidates from threshold ${threshold.toFixed(4)}, SEMANTIC_CACHE_VERIFY=model)`, threshold, hit: (p) => p.strict || yes.has(p) };
}

/** Runs the command; resolves to its exit code (2 on bad input, said in one line on `err`). */
export async function evaluateMain(argv: string[], io: EvaluateIo): Promise<number> {
  try {
    let values: { pairs?: string; profile?: string; 'held-out'?: boolean; training?: boolean; explain?: boolean; verify?: boolean };
    try {
      ({ values } = parseArgs({ args: argv, options: { pairs: { type: 'string' }, profile: { type: 'string' }, 'held-out': { type: 'boolean' }, training: { type: 'boolean' }, explain: { type: 'boolean' }, verify: { type: 'boolean' } } }));
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
    // strict needs no embedder; the similarity profiles need its calibration.
    if (!calibration && profiles.some((p) => p !== 'strict')) {
      throw new ConfigError(`no calibration for embedding model ${embedder.modelId}: run npm run cache:calibrate -- --pairs FILE --unseen FILE first, or --profile strict`);
    }
    const similar = profiles.some((p) => p !== 'strict') || values.verify;
    const scored = scorePairs(pairs, similar ? await pairSimilarities(embedder, pairs) : pairs.map(() => 0));
    const same = pairs.filter((p) => p.same).length;
    const part = values['held-out'] ? ` held out of ${all.length}` : values.training ? ` for training of ${all.length}` : '';
    io.out(`cache:evaluate — ${embedder.modelId}, ${pairs.length} pairs${part} (${same} same, ${pairs.length - same} different)${calibration ? `, thresholds calibrated ${calibration.calibratedAt}` : ''}`);
    const health = scored.filter((p) => p.health);
    if (health.length > 0) io.out(`${health.length} pair${health.length === 1 ? '' : 's'} about health (${health.filter((p) => p.same).length} same-meaning): never served from the cache, counted as misses`);
    const decisions = profiles.map((profile): Decision => {
      if (profile === 'strict') {
        const figures = readStrictFigures();
        return { name: 'strict', heading: `strict (the same question by its words${figures?.offered ? '' : ', not offered: its precision on a set its rules never saw missed its promise'})`, threshold: Infinity, hit: (p) => p.strict };
      }
      const { threshold, offered } = calibration![profile];
      return { name: profile, heading: `${profile} (threshold ${threshold.toFixed(4)}${offered ? '' : `, not offered: its precision on ${calibration!.unseen.set}, written after the rules, missed its promise`})`, threshold, hit: (p) => isHit(p, threshold) };
    });
    if (values.verify) decisions.push(await verified(scored, calibration?.permissive.threshold ?? MIN_THRESHOLD, (io.verifier ?? configuredVerifier)(), io));
    // Strict is printed last (or its model check, when asked), so its summary line closes the output.
    let summary = '';
    for (const { name: profile, heading, threshold, hit } of decisions) {
      const s = score(scored.map((p) => ({ ...p, strict: hit(p), similarity: 0 })), Infinity);
      io.out('');
      io.out(heading);
      io.out(`  pairs ${s.pairs}, precision ${s.precision.toFixed(3)}, paraphrase hit rate ${s.hitRate.toFixed(3)}, hits ${s.hits}, false hits ${s.falseHits}`);
      if (health.length > 0) io.out(`  paraphrase hit rate outside health ${(s.hitRateOutsideHealth ?? 0).toFixed(3)} (${s.positivesOutsideHealth} same-meaning pairs)`);
      // A file that marks its longer sentences (`"long": true`) gets each part's figures: their promises differ.
      if (scored.some((p) => p.long)) {
        for (const [part, subset] of [['short questions', scored.filter((p) => !p.long)], ['longer sentences', scored.filter((p) => p.long)]] as const) {
          const t = score(subset.map((p) => ({ ...p, strict: hit(p), similarity: 0 })), Infinity);
          io.out(`  ${part}: pairs ${t.pairs}, precision ${t.precision.toFixed(3)}, paraphrase hit rate ${t.hitRate.toFixed(3)} (${(t.hitRateOutsideHealth ?? 0).toFixed(3)} outside health), hits ${t.hits}, false hits ${t.falseHits}`);
        }
      }
      const falseHits = scored.filter((p) => !p.same && hit(p));
      for (const p of falseHits.slice(0, MAX_EXAMPLES)) io.out(`  false hit${p.kind ? ` [${p.kind}]` : ''} (${p.similarity.toFixed(3)}): « ${p.a} » / « ${p.b} »`);
      if (falseHits.length > MAX_EXAMPLES) io.out(`  … and ${falseHits.length - MAX_EXAMPLES} more`);
      if (values.explain) {
        const missed = scored.filter((p) => p.same && !p.health && !hit(p));
        io.out(`  ${missed.length} same-meaning pair${missed.length === 1 ? '' : 's'} outside health not served:`);
        for (const p of missed) {
          const why = threshold === Infinity ? `strict keys « ${strictKey(p.a)} » / « ${strictKey(p.b)} »` : p.similarity < threshold ? 'below the threshold' : isCandidate(p, threshold) ? 'the model check said no' : explain(questionGuard(p.a), questionGuard(p.b));
          io.out(`  refused${p.kind ? ` [${p.kind}]` : ''} (${p.similarity.toFixed(3)}) ${why}: « ${p.a} » / « ${p.b} »`);
        }
      }
      const rows = kindRows(scoreByKind(scored.map((p) => ({ ...p, strict: hit(p), similarity: 0 })), Infinity));
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
