import type { IncomingMessage, ServerResponse } from 'node:http';
import { exitOnContractViolation } from '../test/support/contract-violations.ts';
import { FakeMistral } from '../test/support/fake-mistral.ts';
import { CpuProbe } from './load-probe.ts';

/**
 * The model of bench:load in its own process: the tests' loopback FakeMistral (embeddings answered at
 * once), its chat endpoint taken over here to stream the reply FIRST_TOKEN_MS after the request, as a
 * model's time to first token. How late this process's own timers fire (its lateness past
 * FIRST_TOKEN_MS) is reported, so that it is not counted as the runtime's overhead.
 *   argv: firstTokenMs
 */
exitOnContractViolation();
const FIRST_TOKEN_MS = Number(process.argv[2]);
const CHUNKS = ['Je vous écoute, ', 'racontez-moi tout.'];
let lateness: number[] = [];
const cpu = new CpuProbe();

function sse(res: ServerResponse, model: string): void {
  res.writeHead(200, { 'content-type': 'text/event-stream' });
  const base = { id: 'cmpl-1', object: 'chat.completion.chunk', created: 1, model };
  let body = '';
  for (const content of CHUNKS) body += `data: ${JSON.stringify({ ...base, choices: [{ index: 0, delta: { role: 'assistant', content }, finish_reason: null }] })}\n\n`;
  body += `data: ${JSON.stringify({ ...base, choices: [{ index: 0, delta: { content: '' }, finish_reason: 'stop' }], usage: { prompt_tokens: 5, completion_tokens: 3, total_tokens: 8 } })}\n\n`;
  res.end(`${body}data: [DONE]\n\n`);
}

const mistral = await new FakeMistral({
  request(req: IncomingMessage, res: ServerResponse, body: Record<string, unknown>) {
    if (!req.url?.endsWith('/chat/completions')) return false;
    const at = performance.now();
    setTimeout(() => {
      lateness.push(performance.now() - at - FIRST_TOKEN_MS);
      sse(res, String(body.model));
    }, FIRST_TOKEN_MS);
    return true;
  },
  upgrade: () => false,
}).start();
// The fake keeps every embeddings request for the tests' assertions: nothing here reads them.
setInterval(() => (mistral.requests.length = 0), 1000).unref();

process.send!({ type: 'ready', baseUrl: mistral.baseUrl });
process.on('message', (msg: { type: string }) => {
  if (msg.type === 'reset') {
    lateness = [];
    cpu.reset();
    return process.send!({ type: 'reset' });
  }
  if (msg.type !== 'measure') return;
  const sorted = [...lateness].sort((a, b) => a - b);
  const pick = (p: number) => sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))] ?? NaN;
  process.send!({ type: 'measure', requests: sorted.length, lateP50Ms: pick(50), lateP99Ms: pick(99), cpuPercent: cpu.share() });
});
process.on('SIGTERM', () => process.exit(0));
