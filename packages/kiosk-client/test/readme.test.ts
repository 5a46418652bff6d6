import { execFile } from 'node:child_process';
import { mkdir, mkdtemp, readFile, rm, symlink, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { FakeMistral } from '../../../test/support/fake-mistral.ts';
import { FakeVoxtral } from '../../../test/support/fake-voxtral.ts';
import { KIOSK_TOKEN, startTestRuntime, type TestRuntime } from '../../../test/support/runtime.ts';

/**
 * The README's examples, as written: each ```ts block of its "Connect", "A text turn" and "Voice"
 * sections is run by plain Node (Node 24 strips the types), importing the package by its name,
 * against the real runtime with the Mistral and Voxtral fakes behind the real adapters. A harness
 * around the blocks defines the README's placeholders (KIOSK_URL, DEVICE_TOKEN, speak, play,
 * highlight, microphoneFrame) and records what the kiosk would have said and played.
 */
const run = promisify(execFile);
const PACKAGE = path.resolve(import.meta.dirname, '..');
const EXAMPLE_MS = 60_000;
const STREAMED = ['Quelle ', 'bonne idée, ', 'le marché le matin !'];

let voxtral: FakeVoxtral;
let mistral: FakeMistral;
let rt: TestRuntime;
let dir: string;

/** The ```ts blocks of the README section titled `title`. */
function blocks(readme: string, title: string): string[] {
  const section = readme.split(/^## /m).find((s) => s.startsWith(`${title}\n`));
  if (!section) throw new Error(`the README has no "## ${title}" section`);
  return [...section.matchAll(/```ts\n([\s\S]*?)```/g)].map((m) => m[1]!);
}

const PLACEHOLDERS = `
const KIOSK_URL = process.env.KIOSK_URL!;
const DEVICE_TOKEN = process.env.DEVICE_TOKEN!;
const said = { spoken: [] as string[], samples: 0, marks: [] as number[], replies: [] as Array<{ text: string; flux: string }> };
const speak = (text: string): void => void said.spoken.push(text);
const play = (_turnId: string, _sampleOffset: number, pcm: Int16Array): void => void (said.samples += pcm.length);
const highlight = (_turnId: string, textOffset: number): void => void said.marks.push(textOffset);
const microphoneFrame = (): Int16Array => new Int16Array(320);
process.on('exit', () => console.log(JSON.stringify(said)));
`;

/** Runs `code` as a module beside a node_modules that holds this package (its sources, by a link). */
async function runExample(name: string, code: string): Promise<{ spoken: string[]; samples: number; marks: number[]; replies: Array<{ text: string; flux: string }> }> {
  const file = path.join(dir, `${name}.mts`);
  await writeFile(file, `${PLACEHOLDERS}\n${code}`);
  const { stdout } = await run(process.execPath, [file], { cwd: dir, timeout: EXAMPLE_MS, env: { ...process.env, KIOSK_URL: rt.wsUrl, DEVICE_TOKEN: KIOSK_TOKEN } });
  return JSON.parse(stdout.trim().split('\n').at(-1)!) as Awaited<ReturnType<typeof runExample>>;
}

beforeAll(async () => {
  voxtral = new FakeVoxtral();
  mistral = await new FakeMistral(voxtral).start();
  mistral.mode = { kind: 'stream', chunks: STREAMED };
  // The example expects the model's streamed reply, not the SOS line a turn gets past its budget: on a
  // loaded machine (load 15 and more) the default 2.5 s went by before the fake's first token arrived.
  rt = await startTestRuntime({}, { MISTRAL_API_KEY: 'test-key', MISTRAL_BASE_URL: mistral.baseUrl, TURN_BUDGET_MS: '10000' });
  dir = await mkdtemp(path.join(tmpdir(), 'kohami-readme-'));
  await mkdir(path.join(dir, 'node_modules', '@kohami'), { recursive: true });
  await symlink(PACKAGE, path.join(dir, 'node_modules', '@kohami', 'kiosk-client'));
}, 60_000);

afterAll(async () => {
  await rt?.close();
  await mistral?.stop();
  await voxtral?.stop();
  if (dir) await rm(dir, { recursive: true, force: true });
});

describe("the package README's examples, run as written", () => {
  it('connect, then text turns: every reply is spoken once, whole, whether it streamed or came as one reply.done', async () => {
    const readme = await readFile(path.join(PACKAGE, 'README.md'), 'utf8');
    const [connect] = blocks(readme, 'Connect');
    const [text] = blocks(readme, 'A text turn');
    // Between the two blocks the harness notes each reply.done, before the README's listeners see it.
    const listen = `client.on('reply.done', (f) => said.replies.push({ text: f.text, flux: f.flux }));\n`;
    const { spoken, replies } = await runExample('text', `${connect}\n${listen}${text}`);
    expect(replies).toHaveLength(2);
    // One reply came whole, with no delta (a cached greeting), the other streamed from the model.
    expect(replies.map((r) => r.flux).sort()).toEqual(['agent', 'cache']);
    expect(replies.find((r) => r.flux === 'agent')?.text).toBe(STREAMED.join(''));
    expect(spoken.join('')).toBe(replies.map((r) => r.text).join(''));
  }, EXAMPLE_MS);

  it('voice: the typed turn is answered with reply audio played and its marks highlighted', async () => {
    const readme = await readFile(path.join(PACKAGE, 'README.md'), 'utf8');
    const [voice] = blocks(readme, 'Voice');
    const { samples, marks } = await runExample('voice', voice!);
    expect(samples).toBeGreaterThan(24_000 / 10);
    expect(marks.length).toBeGreaterThan(0);
  }, EXAMPLE_MS);
});
