import { once } from 'node:events';
import { connect } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ADMIN_TOKEN, startTestRuntime, type TestRuntime } from '../support/runtime.ts';

const TIMEOUT_MS = 500;
let rt: TestRuntime;
beforeAll(async () => {
  rt = await startTestRuntime({}, { HTTP_REQUEST_TIMEOUT_MS: String(TIMEOUT_MS) });
});
afterAll(async () => rt.close());

/**
 * The adversary: a request whose body comes one byte every 50 ms for as long as the server keeps the
 * connection. Resolves with what the server answered once it closed the connection.
 */
async function trickle(headers: string): Promise<{ answer: string; ms: number }> {
  const socket = connect(Number(new URL(rt.url).port), '127.0.0.1');
  await once(socket, 'connect');
  socket.write(`POST /v1/admin/seniors/00000000-0000-4000-8000-000000000000/facts HTTP/1.1\r\nhost: x\r\ncontent-type: application/json\r\ncontent-length: 100000\r\n${headers}\r\n`);
  let answer = '';
  socket.on('data', (d) => (answer += d));
  const drip = setInterval(() => socket.writable && socket.write('x'), 50);
  const startedAt = performance.now();
  // The drip can write into the connection the server has just closed: the reset that answers it is the
  // adversary's own doing (more likely on a loaded machine), and the answer has been read by then.
  socket.on('error', (err: NodeJS.ErrnoException) => {
    if (err.code !== 'ECONNRESET' && err.code !== 'EPIPE') throw err;
  });
  // Not events.once: it rejects on that 'error'.
  await new Promise((resolve) => socket.once('close', resolve));
  clearInterval(drip);
  return { answer, ms: performance.now() - startedAt };
}

describe('a request body trickled a byte at a time', () => {
  it('without a token: answered 401 at once, and the connection closed instead of reading the body on', async () => {
    const { answer } = await trickle('');
    expect(answer).toMatch(/^HTTP\/1\.1 401/);
    expect(answer).toMatch(/connection: close/i);
  });

  it('with a token: answered 408 once HTTP_REQUEST_TIMEOUT_MS has passed, and the connection closed', async () => {
    const { answer, ms } = await trickle(`authorization: Bearer ${ADMIN_TOKEN}\r\n`);
    expect(answer).toMatch(/^HTTP\/1\.1 408/);
    expect(ms).toBeGreaterThanOrEqual(TIMEOUT_MS - 50);
  });
});
