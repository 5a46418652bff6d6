import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { localHashVector } from '../adapters/embedders/local-hash-embedder.ts';
import { exitOnContractViolation } from '../test/support/contract-violations.ts';
import { FakeMistral } from '../test/support/fake-mistral.ts';

/**
 * The fakes of bench:overhead, in their own process so their work is not the runtime's: Mistral's
 * chat stream (first byte after `chatMs`) and embeddings (answered after `embedMs`, vectors of the
 * local hash embedder, so the semantic cache's calibration applies to them) — and an OpenTelemetry
 * collector that answers every trace export at once (BENCH_TRACES=on).
 */
exitOnContractViolation();
const [chatMs, embedMs] = process.argv.slice(2).map(Number);
const fake = await new FakeMistral().start();
fake.chatFirstByteMs = chatMs!;
fake.embeddingLatencyMs = embedMs!;
fake.embed = localHashVector;
fake.mode = { kind: 'stream', chunks: ['Avec plaisir, ', 'parlons-en.'] };
// The requests are not kept: a long run would pile them up.
fake.requests.push = () => 0;
const collector = http.createServer((req, res) => {
  req.resume();
  req.on('end', () => res.writeHead(200, { 'content-type': 'application/json' }).end('{}'));
});
await new Promise<void>((resolve) => collector.listen(0, '127.0.0.1', resolve));
process.send!({ type: 'ready', url: fake.baseUrl, collector: `http://127.0.0.1:${(collector.address() as AddressInfo).port}` });
process.on('SIGINT', () => process.exit(0));
