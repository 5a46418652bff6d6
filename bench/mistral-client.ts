import { createMistral } from '@ai-sdk/mistral';
import type { LanguageModelV4, LanguageModelV4CallOptions } from '@ai-sdk/provider';
import { fork } from 'node:child_process';
import { once } from 'node:events';
import { MistralAgentModel } from '../adapters/models/mistral-agent-model.ts';
import { stopWithFakes } from './support/child.ts';
import { percentile } from './support/stats.ts';
import { docComment, exitOnHelp } from '../runtime/cli/usage.ts';

exitOnHelp(() => docComment(import.meta.url));

/**
 * The agent's own Mistral streaming client (MistralAgentModel) side by side with the AI SDK's
 * provider (@ai-sdk/mistral's `doStream`) on the same fake in another process, calls alternated
 * one by one: time to the first text delta, to the end of the stream, and this process's CPU per
 * call (the fake's is not counted). The own client is kept only while it beats the provider.
 * `npm run bench:mistral-client [-- CALLS]` (default 400 per client, after 50 of warm-up each).
 */
const CALLS = Number(process.argv[2] ?? 400);
const WARMUP = 50;
const FIRST_BYTE_MS = 20;

const fake = fork(new URL('./overhead-fake.ts', import.meta.url), [String(FIRST_BYTE_MS), '0'], { execArgv: [], stdio: 'inherit' });
stopWithFakes(fake);
const [ready] = (await once(fake, 'message')) as [{ url: string }];
const sdk = createMistral({ apiKey: 'bench', baseURL: ready.url })('mistral-small-2603');
const own = new MistralAgentModel(sdk, { apiKey: 'bench', baseUrl: ready.url, env: 'test' });

/** What the agent sends on a turn: a system prompt, a short window, the search tool. */
const call = (i: number): LanguageModelV4CallOptions => ({
  prompt: [
    { role: 'system', content: 'Tu es Kohami, un compagnon bienveillant. Réponds en une ou deux phrases.' },
    { role: 'user', content: [{ type: 'text', text: `Bonjour, as-tu passé une bonne journée ? (${i})` }] },
  ],
  maxOutputTokens: 200,
  temperature: 0.7,
  tools: [{ type: 'function', name: 'search_memory', description: 'Cherche dans les souvenirs.', inputSchema: { type: 'object', properties: { query: { type: 'string' } }, required: ['query'] } }],
  toolChoice: { type: 'auto' },
});

interface Sample {
  first: number;
  end: number;
  cpuUs: number;
}

async function one(model: LanguageModelV4, i: number): Promise<Sample> {
  const cpu = process.cpuUsage();
  const t = performance.now();
  let first = NaN;
  const { stream } = await model.doStream(call(i));
  const reader = stream.getReader();
  for (;;) {
    const { done, value } = await reader.read();
    if (done) break;
    if (value.type === 'text-delta' && Number.isNaN(first)) first = performance.now() - t;
  }
  const end = performance.now() - t;
  const used = process.cpuUsage(cpu);
  return { first, end, cpuUs: used.user + used.system };
}

const clients = { own, sdk } as const;
const samples: Record<keyof typeof clients, Sample[]> = { own: [], sdk: [] };
for (let i = 0; i < WARMUP + CALLS; i++) {
  for (const name of i % 2 ? (['own', 'sdk'] as const) : (['sdk', 'own'] as const)) {
    const s = await one(clients[name], i);
    if (i >= WARMUP) samples[name].push(s);
  }
}
fake.kill('SIGINT');

const row = (name: string, xs: Sample[]) => {
  const p = (k: keyof Sample, q: number) => percentile(xs.map((s) => s[k]), q);
  return { name, first50: p('first', 50), first99: p('first', 99), end50: p('end', 50), cpu50: p('cpuUs', 50) / 1000, cpuMean: xs.reduce((a, s) => a + s.cpuUs, 0) / xs.length / 1000 };
};
const rows = [row('own client (MistralAgentModel)', samples.own), row('AI SDK provider (@ai-sdk/mistral doStream)', samples.sdk)];
const f = (x: number) => x.toFixed(2);
console.log(`\nbench:mistral-client — ${CALLS} calls each, alternated; fake first byte ${FIRST_BYTE_MS} ms; node ${process.version}\n`);
console.log('| client | first delta p50 / p99 ms | end p50 ms | CPU ms / call p50 / mean |');
console.log('|---|---:|---:|---:|');
for (const r of rows) console.log(`| ${r.name} | ${f(r.first50)} / ${f(r.first99)} | ${f(r.end50)} | ${f(r.cpu50)} / ${f(r.cpuMean)} |`);
const [o, s] = rows as [(typeof rows)[0], (typeof rows)[0]];
console.log(`\nmistral-client: own/sdk CPU per call ${(o.cpuMean / s.cpuMean).toFixed(2)}, first delta p50 ${f(o.first50)} vs ${f(s.first50)} ms`);
