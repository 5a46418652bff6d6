import { localHashVector } from '../adapters/embedders/local-hash-embedder.ts';
import { FakeMistral } from '../test/support/fake-mistral.ts';

/**
 * The fakes of bench:overhead, in their own process so their work is not the runtime's: Mistral's
 * chat stream (first byte after `chatMs`) and embeddings (answered after `embedMs`, vectors of the
 * local hash embedder, so the semantic cache's calibration applies to them).
 */
const [chatMs, embedMs] = process.argv.slice(2).map(Number);
const fake = await new FakeMistral().start();
fake.chatFirstByteMs = chatMs!;
fake.embeddingLatencyMs = embedMs!;
fake.embed = localHashVector;
fake.mode = { kind: 'stream', chunks: ['Avec plaisir, ', 'parlons-en.'] };
// The requests are not kept: a long run would pile them up.
fake.requests.push = () => 0;
process.send!({ type: 'ready', url: fake.baseUrl });
process.on('SIGINT', () => process.exit(0));
