import * as C from '@mistralai/mistralai/models/components';
import { once } from 'node:events';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import WebSocket, { WebSocketServer } from 'ws';
import { expectContractViolations } from '../support/contract-violations.ts';
import { FakeMistral } from '../support/fake-mistral.ts';
import { FakeVoxtral } from '../support/fake-voxtral.ts';
import { checkValidationAnswer, realtimeRefusal, REFUSED_INPUT_CODE } from '../support/mistral-contract.ts';

/** The fakes hold the runtime to Mistral's contract: a break is refused as the service does, and recorded for the suite. */
describe('the conformance fakes', () => {
  let voxtral: FakeVoxtral;
  let mistral: FakeMistral;

  beforeAll(async () => {
    voxtral = new FakeVoxtral();
    mistral = await new FakeMistral(voxtral).start();
  });
  afterAll(() => Promise.all([voxtral.stop(), mistral.stop()]));

  const post = (path: string, body: unknown) =>
    fetch(`${mistral.baseUrl}${path}`, { method: 'POST', headers: { 'content-type': 'application/json', authorization: 'Bearer k' }, body: JSON.stringify(body) });

  it('a chat request with a field the API lacks gets Mistral’s 422 extra_forbidden, and is not served', async () => {
    const broken = expectContractViolations();
    const res = await post('/chat/completions', { model: 'mistral-small-2603', messages: [{ role: 'user', content: 'Bonjour' }], stream: true, store: false });
    expect(res.status).toBe(422);
    const body = await res.json();
    expect(body).toEqual({ detail: [{ type: 'extra_forbidden', loc: ['body', 'store'], msg: 'Extra inputs are not permitted', input: false }] });
    expect(checkValidationAnswer(body)).toEqual([]);
    expect(mistral.chatRequests).toHaveLength(0);
    expect(broken).toEqual([{ side: 'request', endpoint: 'POST /v1/chat/completions', path: ['store'], kind: 'extra_forbidden', message: 'Extra inputs are not permitted', input: false }]);
  });

  it('embeddings and speech requests are checked too; a missing field is `missing`', async () => {
    const broken = expectContractViolations();
    const embeddings = await post('/embeddings', { model: 'mistral-embed', inputs: ['a'] });
    expect(embeddings.status).toBe(422);
    expect((await embeddings.json()).detail.map((d: { type: string; loc: unknown[] }) => `${d.type} ${d.loc.join('.')}`)).toEqual(['extra_forbidden body.inputs', 'missing body.input']);
    const speech = await post('/audio/speech', { model: 'voxtral-mini-tts-2603', input: 'Bonjour.', voice_id: 'v', response_format: 'pcm', stream: true, speed: 1.2 });
    expect(speech.status).toBe(422);
    expect(voxtral.speechRequests).toHaveLength(0);
    expect(broken.map((v) => `${v.endpoint} ${v.path.join('.')}`)).toEqual(['POST /v1/embeddings inputs', 'POST /v1/embeddings input', 'POST /v1/audio/speech speed']);
  });

  it('a realtime message off-contract is answered with an error event of the SDK’s shape, naming the field, and not applied', async () => {
    const broken = expectContractViolations();
    const socket = new WebSocket(`${mistral.baseUrl.replace('http', 'ws')}/audio/transcriptions/realtime?model=voxtral-mini-transcribe-realtime-2602`, { headers: { authorization: 'Bearer k' } });
    const events: Array<{ type: string }> = [];
    socket.on('message', (data) => events.push(JSON.parse(String(data)) as { type: string }));
    await expect.poll(() => events.map((e) => e.type)).toEqual(['session.created']);
    socket.send(JSON.stringify({ type: 'session.update', session: { audio_format: { encoding: 'pcm_s16le', sample_rate: 16_000 }, language: 'fr' } }));
    await expect.poll(() => events.length).toBe(2);
    const error = C.RealtimeTranscriptionError$inboundSchema.parse(events[1]);
    expect(error.error).toEqual({ message: 'session.language: Extra inputs are not permitted', code: REFUSED_INPUT_CODE });
    expect(voxtral.sockets.at(-1)!.refusedUpdates).toBe(1);
    // The documented fields alone are taken.
    socket.send(JSON.stringify({ type: 'session.update', session: { audio_format: { encoding: 'pcm_s16le', sample_rate: 16_000 } } }));
    await expect.poll(() => events.map((e) => e.type)).toEqual(['session.created', 'error', 'session.updated']);
    socket.close();
    await once(socket, 'close');
    expect(broken.map((v) => `${v.side} ${v.endpoint} ${v.path.join('.')}`)).toEqual(['request realtime session.update session.language']);
  });

  it('a break a service behaviour accepts is recorded but not refused; the others are', async () => {
    const broken = expectContractViolations();
    const server = new WebSocketServer({ port: 0, host: '127.0.0.1' });
    const taken: string[] = [];
    server.on('connection', (ws) =>
      ws.on('message', (data) => {
        const refusal = realtimeRefusal(String(data), (issue) => issue.path.join('.') === 'session.language');
        if (refusal === null) taken.push(String(data));
        else ws.send(JSON.stringify({ type: 'error', error: { message: refusal, code: REFUSED_INPUT_CODE } }));
      }),
    );
    await once(server, 'listening');
    const socket = new WebSocket(`ws://127.0.0.1:${(server.address() as AddressInfo).port}`);
    const events: unknown[] = [];
    socket.on('message', (data) => events.push(JSON.parse(String(data))));
    await once(socket, 'open');
    socket.send(JSON.stringify({ type: 'session.update', session: { language: 'fr' } }));
    socket.send(JSON.stringify({ type: 'session.update', session: { language: 'fr', context_bias: ['Marie'] } }));
    await expect.poll(() => events).toEqual([{ type: 'error', error: { message: 'session.context_bias: Extra inputs are not permitted', code: REFUSED_INPUT_CODE } }]);
    expect(taken).toHaveLength(1);
    socket.close();
    server.close();
    expect(broken.map((v) => v.path.join('.'))).toEqual(['session.language', 'session.language', 'session.context_bias']);
  });

  it('an answer of a fake off the SDK’s inbound schema is recorded as the fake’s break', async () => {
    const broken = expectContractViolations();
    const fake = await new FakeMistral({
      request(_req, res) {
        res.writeHead(200, { 'content-type': 'text/event-stream' });
        res.end(`data: ${JSON.stringify({ choices: [{ index: 0, delta: { content: 'x' }, finish_reason: null }] })}\n\ndata: [DONE]\n\n`);
        return true;
      },
      upgrade: () => false,
    }).start();
    try {
      const res = await fetch(`${fake.baseUrl}/chat/completions`, { method: 'POST', body: JSON.stringify({ model: 'm', messages: [{ role: 'user', content: 'x' }], stream: true }) });
      await res.text();
    } finally {
      await fake.stop();
    }
    expect(broken.map((v) => `${v.side} ${v.path.join('.')}`)).toEqual(['answer id', 'answer model']);
  });
});
