import { execFile } from 'node:child_process';
import { mkdtemp, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';
import { beforeAll, describe, expect, it } from 'vitest';
import { LocalHashEmbedder } from '../../adapters/embedders/local-hash-embedder.ts';
import { isHeldOut } from '../../adapters/semantic-cache/semantic-cache-calibration.ts';
import { evaluateMain } from '../../runtime/cli/cache-evaluate.ts';

const SUMMARY = /^strict: precision \d\.\d{3}, hit rate \d\.\d{3} on \d+ pairs$/;
let dir: string;
const file = async (name: string, text: string) => {
  const f = path.join(dir, name);
  await writeFile(f, text);
  return f;
};
const jsonl = (rows: object[]) => rows.map((r) => JSON.stringify(r)).join('\n');

async function run(argv: string[]) {
  const out: string[] = [];
  const err: string[] = [];
  const code = await evaluateMain(argv, { out: (l) => out.push(l), err: (l) => err.push(l), embedder: () => new LocalHashEmbedder() });
  return { code, out, err };
}

const SAMPLE = [
  { a: 'Raconte-moi une blague.', b: 'Dis-moi une blague.', same: true, kind: 'paraphrase' },
  { a: 'Quel temps fera-t-il demain ?', b: 'Demain, il fera quel temps ?', same: true, kind: 'reorder' },
  { a: 'Il fait froid dans ma chambre.', b: 'Il fait chaud dans ma chambre.', same: false, kind: 'adjective' },
  { a: 'Allume la lumière.', b: 'Éteins la lumière.', same: false, kind: 'verb' },
  // A near-miss the guard cannot see, labelled different by this deployer: a false hit to report.
  { a: 'Tu connais une blague ?', b: 'Une blague, tu en connais une ?', same: false, kind: 'topic' },
  { a: 'Où sont mes clés ?', b: 'Où sont mes lunettes ?', same: false },
];

beforeAll(async () => {
  dir = await mkdtemp(path.join(tmpdir(), 'evaluate-'));
});

describe('npm run cache:evaluate', () => {
  it('prints each profile with its figures, false hits and kinds; the last line is the strict summary', async () => {
    const { code, out, err } = await run(['--pairs', await file('sample.jsonl', jsonl(SAMPLE))]);
    expect(err).toEqual([]);
    expect(code).toBe(0);
    expect(out[0]).toMatch(/^cache:evaluate — kohami-local-hash-v1, 6 pairs \(2 same, 4 different\)/);
    const text = out.join('\n');
    for (const profile of ['aggressive', 'permissive']) expect(text).toMatch(new RegExp(`^${profile} \\(threshold 0\\.\\d{4}`, 'm'));
    expect(text).toMatch(/^strict \(the same question by its words\)$/m);
    expect(text).toMatch(/^ {2}pairs 6, precision 0\.667, paraphrase hit rate 1\.000, hits 3, false hits 1$/m);
    expect(text).toContain('false hit [topic]');
    expect(text).toContain('« Tu connais une blague ? » / « Une blague, tu en connais une ? »');
    expect(text).toMatch(/\| adjective \| near-miss \| 1 \| 0 false \| refused 1\.000 \|/);
    expect(text).toMatch(/\| topic \| near-miss \| 1 \| 1 false \| refused 0\.000 \|/);
    expect(out.at(-1)).toMatch(SUMMARY);
    // strict serves the reordered question only: the same words, « demain » said first.
    expect(out.at(-1)).toBe('strict: precision 1.000, hit rate 0.500 on 6 pairs');
  });

  it('counts questions about health as never served, gives the hit rate outside health, and --held-out keeps the held-out pairs', async () => {
    const rows = [
      ...SAMPLE,
      { a: 'J’ai pris mon cachet ?', b: 'J’ai bien pris mon comprimé ?', same: true, kind: 'paraphrase' },
      { a: 'Je peux prendre mon cachet ?', b: 'Je dois prendre mon cachet ?', same: false, kind: 'health' },
    ];
    const all = await run(['--pairs', await file('health.jsonl', jsonl(rows)), '--profile', 'permissive']);
    const text = all.out.join('\n');
    expect(text).toContain('2 pairs about health (1 same-meaning): never served from the cache, counted as misses');
    expect(text).toMatch(/^ {2}pairs 8, precision 0\.667, paraphrase hit rate 0\.667, hits 3, false hits 1$/m);
    expect(text).toMatch(/^ {2}paraphrase hit rate outside health 1\.000 \(2 same-meaning pairs\)$/m);
    expect(text).toMatch(/\| paraphrase \| same \| 2 \| 1 \| hit rate 0\.500 \| 1 \| 1\.000 \|/);
    expect(text).toMatch(/\| health \| near-miss \| 1 \| 0 false \| refused 1\.000 \| 1 \| — \|/);
    const heldOut = await run(['--pairs', await file('health.jsonl', jsonl(rows)), '--profile', 'permissive', '--held-out']);
    const kept = rows.filter(isHeldOut).length;
    expect(heldOut.out[0]).toMatch(new RegExp(`^cache:evaluate — kohami-local-hash-v1, ${kept} pairs held out of 8 `));
    expect(heldOut.out.at(-1)).toMatch(new RegExp(`^permissive: precision \\d\\.\\d{3}, hit rate \\d\\.\\d{3} on ${kept} pairs$`));
    // --training keeps the other part: the pairs a rule may be tuned on.
    const training = await run(['--pairs', await file('health.jsonl', jsonl(rows)), '--profile', 'permissive', '--training']);
    expect(training.out[0]).toMatch(new RegExp(`^cache:evaluate — kohami-local-hash-v1, ${8 - kept} pairs for training of 8 `));
    expect(training.out.at(-1)).toMatch(new RegExp(`^permissive: precision \\d\\.\\d{3}, hit rate \\d\\.\\d{3} on ${8 - kept} pairs$`));
  });

  it('gives the short questions and the longer sentences apart when the file marks them', async () => {
    const rows = [
      ...SAMPLE,
      { a: 'Je voudrais savoir à quelle heure ma fille passe demain, pour préparer le déjeuner.', b: 'Ma fille passe à quelle heure demain ? Je voudrais préparer le déjeuner.', same: true, kind: 'paraphrase', long: true },
      { a: 'Il fait froid dans ma chambre ce soir, tu crois que je dois monter le chauffage ?', b: 'Il fait chaud dans ma chambre ce soir, tu crois que je dois monter le chauffage ?', same: false, kind: 'adjective', long: true },
    ];
    const { code, out } = await run(['--pairs', await file('long.jsonl', jsonl(rows)), '--profile', 'permissive']);
    expect(code).toBe(0);
    const text = out.join('\n');
    expect(text).toMatch(/^ {2}short questions: pairs 6, precision 0\.667, paraphrase hit rate 1\.000 \(1\.000 outside health\), hits 3, false hits 1$/m);
    expect(text).toMatch(/^ {2}longer sentences: pairs 2, precision \d\.\d{3}, paraphrase hit rate \d\.\d{3} \(\d\.\d{3} outside health\), hits \d, false hits 0$/m);
    // a file with no marks prints neither
    const plain = await run(['--pairs', await file('plain.jsonl', jsonl(SAMPLE)), '--profile', 'permissive']);
    expect(plain.out.join('\n')).not.toContain('longer sentences');
  });

  it('--explain lists each same-meaning pair outside health that is not served, and why', async () => {
    const rows = [
      { a: 'Raconte-moi une blague.', b: 'Dis-moi une blague.', same: true, kind: 'paraphrase' },
      // the guard refuses it: the past of « être » against its present
      { a: 'Le marché, c’était le mardi ?', b: 'Le marché, c’est le mardi ?', same: true, kind: 'paraphrase' },
      // below any threshold: no word shared
      { a: 'Allume la lumière.', b: 'Je voudrais y voir clair.', same: true, kind: 'paraphrase' },
      // a detail: both sides' values
      { a: 'Le chat a mangé ?', b: 'Le chat a déjà mangé ?', same: true, kind: 'paraphrase' },
      { a: 'J’ai pris mon cachet ?', b: 'J’ai bien pris mon comprimé ?', same: true, kind: 'health_same' },
    ];
    const { code, out } = await run(['--pairs', await file('explain.jsonl', jsonl(rows)), '--profile', 'permissive', '--explain']);
    expect(code).toBe(0);
    const text = out.join('\n');
    expect(text).toMatch(/^ {2}3 same-meaning pairs outside health not served:$/m);
    expect(text).toMatch(/^ {2}refused \[paraphrase\] \(\d\.\d{3}\) aspects: ∅ \/ already: « Le chat a mangé \? »/m);
    expect(text).toMatch(/^ {2}refused \[paraphrase\] \(\d\.\d{3}\) tense: past \/ not past: « Le marché, c’était le mardi \? » \/ « Le marché, c’est le mardi \? »$/m);
    expect(text).toMatch(/^ {2}refused \[paraphrase\] \(\d\.\d{3}\) below the threshold: « Allume la lumière\. »/m);
    // the served pair and the health pair (never served, by design) are not listed
    expect(text).not.toContain('refused [paraphrase] (1.000)');
    expect(text).not.toContain('refused [health_same]');
    expect(out.at(-1)).toMatch(/^permissive: precision/);
    // without the flag, no list
    const plain = await run(['--pairs', await file('explain.jsonl', jsonl(rows)), '--profile', 'permissive']);
    expect(plain.out.join('\n')).not.toContain('not served');
  });

  it('--profile strict needs no calibration of the embedder and --explain gives both keys', async () => {
    const { code, out } = await run(['--pairs', await file('strict.jsonl', jsonl(SAMPLE)), '--profile', 'strict', '--explain']);
    expect(code).toBe(0);
    expect(out.join('\n')).toContain('refused [paraphrase] (0.000) strict keys « raconte moi une blague » / « dis moi une blague »');
    const calibrationless = await evaluateMain(['--pairs', await file('strict2.jsonl', jsonl(SAMPLE)), '--profile', 'strict'], { out: () => {}, err: () => {}, embedder: () => new LocalHashEmbedder(), calibrations: () => ({}) });
    expect(calibrationless).toBe(0);
  });

  it('--verify puts each permissive candidate strict does not serve to the model check, and counts its answers', async () => {
    const asked: string[] = [];
    const out: string[] = [];
    const verifier = { sameQuestion: async ({ asked: q }: { asked: string }) => (asked.push(q), q.includes('blague')) };
    const code = await evaluateMain(['--pairs', await file('verify.jsonl', jsonl(SAMPLE)), '--profile', 'strict', '--verify'], { out: (l) => out.push(l), err: () => {}, embedder: () => new LocalHashEmbedder(), verifier: () => verifier });
    expect(code).toBe(0);
    const text = out.join('\n');
    expect(text).toMatch(/^model check: \d+ candidates? put to the model, \d+ confirmed, 0 without a verdict in \d+ ms \(misses\); latency p50 \d+ ms, p95 \d+ ms$/m);
    expect(asked.length).toBeGreaterThan(0);
    // The reordered pair is strict's: never asked.
    expect(asked).not.toContain('Demain, il fera quel temps ?');
    expect(out.at(-1)).toMatch(/^strict \+ model check: precision \d\.\d{3}, hit rate \d\.\d{3} on 6 pairs$/);
  });

  it('--profile evaluates that profile alone, and ends on its summary', async () => {
    const { code, out } = await run(['--pairs', await file('one.jsonl', jsonl(SAMPLE)), '--profile', 'permissive']);
    expect(code).toBe(0);
    expect(out.join('\n')).not.toMatch(/^strict/m);
    expect(out.at(-1)).toMatch(/^permissive: precision \d\.\d{3}, hit rate \d\.\d{3} on 6 pairs$/);
  });

  it('shows at most 10 false hits', async () => {
    const lookalikes = Array.from({ length: 14 }, (_, i) => ({ a: `Tu connais la chanson ${i} ?`, b: `La chanson ${i}, tu la connais ?`, same: false }));
    const { out } = await run(['--pairs', await file('many.jsonl', jsonl([...lookalikes, SAMPLE[0]!])), '--profile', 'permissive']);
    expect(out.filter((l) => l.startsWith('  false hit'))).toHaveLength(10);
    expect(out).toContain('  … and 4 more');
    expect(out.at(-1)).toBe('permissive: precision 0.067, hit rate 1.000 on 15 pairs');
  });

  it.each([
    ['not JSONL', () => file('bad.jsonl', '{"a":"x","b":"y","same":true}\nnot json\n'), [], /bad\.jsonl:2: not JSON/],
    ['a missing field', () => file('field.jsonl', '{"a":"x","same":true}\n'), [], /field\.jsonl:1: expected \{"a": string, "b": string, "same": boolean, "kind"\?: string\}/],
    ['a wrong type', () => file('type.jsonl', '{"a":"x","b":"y","same":"yes"}\n'), [], /type\.jsonl:1: expected/],
    ['an empty file', () => file('empty.jsonl', ''), [], /empty\.jsonl: no labelled pairs/],
    ['a missing file', async () => path.join(dir, 'nowhere.jsonl'), [], /nowhere\.jsonl: cannot read the pairs file \(ENOENT\)/],
    ['an unknown profile', () => file('ok.jsonl', jsonl(SAMPLE)), ['--profile', 'yolo'], /^unknown profile "yolo": strict, permissive or aggressive$/],
    ['both parts of the split', () => file('ok.jsonl', jsonl(SAMPLE)), ['--held-out', '--training'], /^--held-out and --training name the two parts of the split: one at most; usage/],
  ] as const)('refuses %s with one clear line and exit code 2', async (_what, make, extra, message) => {
    const { code, out, err } = await run(['--pairs', await make(), ...extra]);
    expect(code).toBe(2);
    expect(out).toEqual([]);
    expect(err).toHaveLength(1);
    expect(err[0]).toMatch(message);
  });

  it('refuses a missing --pairs and an unknown option with the usage', async () => {
    for (const argv of [[], ['--pairs', 'x.jsonl', '--threshold', '0.5']]) {
      const { code, err } = await run(argv);
      expect(code).toBe(2);
      expect(err).toHaveLength(1);
      expect(err[0]).toMatch(/usage: npm run cache:evaluate -- --pairs FILE\.jsonl/);
    }
  });

  it('as a command: the configured (offline) embedder, exit codes 0 and 2, the last line on stdout', async () => {
    const exec = promisify(execFile);
    const env = { ...process.env, MISTRAL_API_KEY: '' };
    const cli = ['runtime/cli/cache-evaluate.ts'];
    const ok = await exec(process.execPath, [...cli, '--pairs', await file('cli.jsonl', jsonl(SAMPLE))], { env });
    expect(ok.stdout.trimEnd().split('\n').at(-1)).toMatch(SUMMARY);
    const bad = await exec(process.execPath, [...cli, '--pairs', await file('cli-bad.jsonl', 'nope')], { env }).catch((e: { code: number; stderr: string }) => e);
    expect(bad).toMatchObject({ code: 2, stderr: expect.stringMatching(/cli-bad\.jsonl:1: not JSON/) });
  }, 30_000);
});
