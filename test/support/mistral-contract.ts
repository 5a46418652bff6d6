import type { IncomingMessage, ServerResponse } from 'node:http';
import { StringDecoder } from 'node:string_decoder';
import * as C from '@mistralai/mistralai/models/components';
import * as O from '@mistralai/mistralai/models/operations';
import type { WebSocket, WebSocketServer } from 'ws';
import { z } from 'zod';
import { type ContractViolation, recordContractViolation } from './contract-violations.ts';
import { checkWire, type WireIssue } from './zod-wire-walker.ts';

/**
 * Mistral's contract as the SDK the runtime depends on (`@mistralai/mistralai`) writes it down in zod:
 * one strict check per message the runtime sends to a Mistral endpoint, and per answer the fakes send
 * back. The fakes (fake-mistral.ts, fake-voxtral.ts) refuse a request that breaks it as the service does
 * (422 `extra_forbidden` on HTTP, an `error` event on the realtime socket) and record every break
 * (contract-violations.ts); the suite's setup (contract-setup.ts) fails any test during which one was
 * recorded, unless the test declared it with `expectContractViolations()`. An answer of a fake that
 * breaks it is a bug of the fake, recorded the same way.
 */

// --- what the runtime sends ---

const REALTIME_CLIENT_MESSAGES: Record<string, z.core.$ZodType> = {
  'session.update': C.RealtimeTranscriptionSessionUpdateMessage$inboundSchema,
  'input_audio.append': C.RealtimeTranscriptionInputAudioAppend$inboundSchema,
  'input_audio.flush': C.RealtimeTranscriptionInputAudioFlush$inboundSchema,
  'input_audio.end': C.RealtimeTranscriptionInputAudioEnd$inboundSchema,
};
/** `input_audio.append`'s bound, from the SDK's own description of `audio` ("Max decoded size: 262144 bytes"), which its schema does not encode. */
export const MAX_APPEND_BYTES = 262_144;

/** One message of the realtime transcription socket, picked by its `type` (an unknown type is itself a break). */
export function checkRealtimeClientMessage(message: unknown): WireIssue[] {
  const schema = REALTIME_CLIENT_MESSAGES[typeOf(message) ?? ''];
  if (!schema) return [unknownType(message, Object.keys(REALTIME_CLIENT_MESSAGES))];
  const issues = checkWire(schema, message, 'inbound');
  const audio = (message as { audio?: unknown }).audio;
  if (typeof audio === 'string' && Buffer.byteLength(audio, 'base64') > MAX_APPEND_BYTES) {
    issues.push({ path: ['audio'], kind: 'invalid', message: `decoded audio over ${MAX_APPEND_BYTES} bytes` });
  }
  return issues;
}

export const checkSpeechRequest = (body: unknown): WireIssue[] => checkWire(C.SpeechRequest$outboundSchema, body, 'outbound');

/** A chat completion request: streamed (`stream: true`) or not, each against its own schema. */
export function checkChatRequest(body: unknown): WireIssue[] {
  const streamed = (body as { stream?: unknown } | null)?.stream === true;
  return checkWire(streamed ? C.ChatCompletionStreamRequest$outboundSchema : C.ChatCompletionRequest$outboundSchema, body, 'outbound');
}

export const checkEmbeddingRequest = (body: unknown): WireIssue[] => checkWire(C.EmbeddingRequest$outboundSchema, body, 'outbound');

/** `GET /v1/audio/voices`'s query: each parameter, its text read as the number the schema asks for where it asks one. */
export function checkVoiceListQuery(query: URLSearchParams): WireIssue[] {
  const schema = O.ListVoicesV1AudioVoicesGetRequest$outboundSchema as unknown as z.ZodObject;
  const values: Record<string, unknown> = {};
  for (const [key, text] of query) {
    const field = schema.shape[key];
    values[key] = field && acceptsNumber(field) && /^-?\d+$/.test(text) ? Number(text) : text;
  }
  return checkWire(schema, values, 'outbound');
}

function acceptsNumber(schema: z.core.$ZodType): boolean {
  const def = (schema as z.core.$ZodTypes)._zod.def;
  if (def.type === 'number') return true;
  return 'innerType' in def && acceptsNumber(def.innerType);
}

// --- what the fakes answer ---

const REALTIME_SERVER_EVENTS: Record<string, z.core.$ZodType> = {
  'session.created': C.RealtimeTranscriptionSessionCreated$inboundSchema,
  'session.updated': C.RealtimeTranscriptionSessionUpdated$inboundSchema,
  'transcription.language': C.TranscriptionStreamLanguage$inboundSchema,
  'transcription.segment': C.TranscriptionStreamSegmentDelta$inboundSchema,
  'transcription.text.delta': C.TranscriptionStreamTextDelta$inboundSchema,
  'transcription.done': C.TranscriptionStreamDone$inboundSchema,
  error: C.RealtimeTranscriptionError$inboundSchema,
};

/** One event of the realtime transcription socket (the SDK's `parseRealtimeEvent` turns an unknown type into an unknown event). */
export function checkRealtimeServerEvent(event: unknown): WireIssue[] {
  const schema = REALTIME_SERVER_EVENTS[typeOf(event) ?? ''];
  return schema ? checkWire(schema, event, 'inbound') : [unknownType(event, Object.keys(REALTIME_SERVER_EVENTS))];
}

const SPEECH_EVENTS: Record<string, z.core.$ZodType> = {
  [C.SpeechStreamEventTypes.SpeechAudioDelta]: C.SpeechStreamAudioDelta$inboundSchema,
  [C.SpeechStreamEventTypes.SpeechAudioDone]: C.SpeechStreamDone$inboundSchema,
};

/** One server-sent event of a streamed speech answer: the SDK reads its `event:` name and picks the schema by the data's `type`. */
export function checkSpeechEvent(name: string | undefined, data: unknown): WireIssue[] {
  const type = typeOf(data);
  const schema = SPEECH_EVENTS[type ?? ''];
  if (!schema) return [unknownType(data, Object.keys(SPEECH_EVENTS))];
  const issues = checkWire(schema, data, 'inbound');
  if (name !== type) issues.push({ path: ['event'], kind: 'invalid', message: `the SSE event is named ${JSON.stringify(name)}, its data's type is ${type}`, input: name });
  return issues;
}

export const checkSpeechAnswer = (body: unknown) => checkWire(O.SpeechResponse$inboundSchema, body, 'inbound');
export const checkChatCompletion = (body: unknown) => checkWire(C.ChatCompletionResponse$inboundSchema, body, 'inbound');
export const checkChatChunk = (body: unknown) => checkWire(C.CompletionChunk$inboundSchema, body, 'inbound');
export const checkEmbeddingAnswer = (body: unknown) => checkWire(C.EmbeddingResponse$inboundSchema, body, 'inbound');
export const checkVoiceList = (body: unknown) => checkWire(C.VoiceListResponse$inboundSchema, body, 'inbound');
/** A 422's body, as the SDK reads it (`HTTPValidationError`: a `detail` list of `ValidationError`). */
const ValidationAnswer = z.object({ detail: z.array(C.ValidationError$inboundSchema) });
export const checkValidationAnswer = (body: unknown) => checkWire(ValidationAnswer, body, 'inbound');

const typeOf = (message: unknown) => (typeof (message as { type?: unknown } | null)?.type === 'string' ? (message as { type: string }).type : undefined);

function unknownType(message: unknown, known: string[]): WireIssue {
  const type = (message as { type?: unknown } | null)?.type;
  return { path: ['type'], kind: 'invalid', message: `${JSON.stringify(type) ?? 'none'} is not one of ${known.join(', ')}`, input: type };
}

function record(side: ContractViolation['side'], endpoint: string, issues: WireIssue[]): void {
  for (const issue of issues) recordContractViolation({ side, endpoint, ...issue });
}

// --- the fakes' side ---

/**
 * Mistral's error code for a refused input, as reported with `extra_forbidden` on chat
 * (`"type":"invalid_request_error","code":3001`, partITech/php-mistral#76); what the realtime socket
 * answers is not documented, so the fake uses the same.
 */
export const REFUSED_INPUT_CODE = 3001;

/**
 * Called first on each message a fake's realtime socket receives: every break of the contract is recorded,
 * and the answer is why the message is refused (an `error` event's text, naming each break), or null. A
 * break `accepted` (a service behaviour that takes an undocumented field) is recorded all the same — the
 * SDK's schema refuses it — but not refused.
 */
export function realtimeRefusal(data: string, accepted: (issue: WireIssue) => boolean = () => false): string | null {
  const message = parseJson(data);
  const issues = message === undefined ? [NOT_JSON] : checkRealtimeClientMessage(message);
  record('request', `realtime ${message === undefined ? '(not JSON)' : (typeOf(message) ?? '(no type)')}`, issues);
  const refused = issues.filter((issue) => !accepted(issue));
  return refused.length === 0 ? null : refused.map((i) => `${i.path.join('.') || 'message'}: ${i.message}`).join('; ');
}

/** Every event a fake's realtime sockets send is checked as it leaves. */
export function checkingRealtimeAnswers(wss: WebSocketServer): WebSocketServer {
  const handleUpgrade = wss.handleUpgrade.bind(wss);
  wss.handleUpgrade = (req, socket, head, callback) =>
    handleUpgrade(req, socket, head, (ws, request) => {
      const send = ws.send.bind(ws) as (data: unknown, ...rest: unknown[]) => void;
      ws.send = ((data: unknown, ...rest: unknown[]) => {
        const event = parseJson(String(data));
        record('answer', `realtime ${typeOf(event) ?? '(no type)'}`, event === undefined ? [NOT_JSON] : checkRealtimeServerEvent(event));
        send(data, ...rest);
      }) as WebSocket['send'];
      callback(ws, request);
    });
  return wss;
}

type HttpEndpoint = 'chat' | 'embeddings' | 'speech' | 'voices';
const ROUTES: Array<{ method: string; suffix: string; endpoint: HttpEndpoint }> = [
  { method: 'POST', suffix: '/chat/completions', endpoint: 'chat' },
  { method: 'POST', suffix: '/embeddings', endpoint: 'embeddings' },
  { method: 'POST', suffix: '/audio/speech', endpoint: 'speech' },
  { method: 'GET', suffix: '/audio/voices', endpoint: 'voices' },
];
const guarded = new WeakSet<IncomingMessage>();

/**
 * Called first on each HTTP request a fake receives (its JSON body read): a request to a Mistral endpoint
 * that breaks the contract is recorded and answered 422 as Mistral does (FastAPI's `detail` list:
 * `extra_forbidden` for an unknown field, nomtek/mistralai_client_dart#44); true when it was. Otherwise
 * the fake's answer is checked as it is written. A request guarded once (a fake mounted on another) is
 * not checked again.
 */
export function refuseHttpRequest(req: IncomingMessage, res: ServerResponse, body: Record<string, unknown>): boolean {
  if (guarded.has(req)) return false;
  guarded.add(req);
  const url = new URL(req.url ?? '/', 'http://fake');
  const route = ROUTES.find((r) => r.method === req.method && url.pathname.endsWith(r.suffix));
  if (!route) return false;
  const endpoint = `${route.method} ${url.pathname}`;
  const issues = requestIssues(route.endpoint, body, url.searchParams);
  if (issues.length === 0) {
    watchAnswer(res, endpoint, route.endpoint, body.stream === true);
    return false;
  }
  record('request', endpoint, issues);
  const where = route.endpoint === 'voices' ? 'query' : 'body';
  const detail = issues.map((i) => ({
    type: i.kind === 'extra_forbidden' ? 'extra_forbidden' : i.input === undefined ? 'missing' : 'value_error',
    loc: [where, ...i.path],
    msg: i.kind === 'invalid' && i.input === undefined ? 'Field required' : i.message,
    ...(i.input === undefined ? {} : { input: i.input }),
  }));
  res.writeHead(422, { 'content-type': 'application/json' });
  res.end(JSON.stringify({ detail }));
  return true;
}

function requestIssues(endpoint: HttpEndpoint, body: unknown, query: URLSearchParams): WireIssue[] {
  if (endpoint === 'chat') return checkChatRequest(body);
  if (endpoint === 'embeddings') return checkEmbeddingRequest(body);
  if (endpoint === 'speech') return checkSpeechRequest(body);
  return checkVoiceListQuery(query);
}

/** A JSON answer's body, or a streamed one's server-sent events as they complete; a 422 as the SDK reads one; other errors are not checked. */
function watchAnswer(res: ServerResponse, endpoint: string, kind: HttpEndpoint, streamed: boolean): void {
  const decoder = new StringDecoder('utf8');
  let text = '';
  const take = (chunk: unknown) => {
    if (typeof chunk === 'string') text += chunk;
    else if (chunk instanceof Uint8Array) text += decoder.write(Buffer.from(chunk.buffer, chunk.byteOffset, chunk.byteLength));
    if (res.statusCode !== 200 || !streamed) return;
    // Server-sent events end at a blank line; a line ends with CRLF, LF or CR.
    const events = text.split(/\r\n\r\n|\n\n|\r\r/);
    text = events.pop()!;
    for (const event of events) checkEvent(endpoint, kind, event);
  };
  const write = res.write.bind(res) as (...args: unknown[]) => boolean;
  const end = res.end.bind(res) as (...args: unknown[]) => ServerResponse;
  res.write = ((chunk: unknown, ...rest: unknown[]) => {
    take(chunk);
    return write(chunk, ...rest);
  }) as ServerResponse['write'];
  res.end = ((chunk?: unknown, ...rest: unknown[]) => {
    if (typeof chunk !== 'function') take(chunk);
    if (res.statusCode === 422) checkJson(endpoint, text, checkValidationAnswer);
    else if (res.statusCode === 200 && !streamed) checkJson(endpoint, text, JSON_ANSWERS[kind]);
    return end(chunk, ...rest);
  }) as ServerResponse['end'];
}

const JSON_ANSWERS: Record<HttpEndpoint, (body: unknown) => WireIssue[]> = {
  chat: checkChatCompletion,
  embeddings: checkEmbeddingAnswer,
  speech: checkSpeechAnswer,
  voices: checkVoiceList,
};

function checkJson(endpoint: string, text: string, check: (body: unknown) => WireIssue[]): void {
  const body = parseJson(text);
  record('answer', endpoint, body === undefined ? [NOT_JSON] : check(body));
}

/** One server-sent event: chat's are `data:` chunks ended by `[DONE]`; speech's are named. */
function checkEvent(endpoint: string, kind: HttpEndpoint, event: string): void {
  let name: string | undefined;
  const data: string[] = [];
  for (const line of event.split(/\r\n|\n|\r/)) {
    if (line.startsWith('event:')) name = line.slice(6).trim();
    else if (line.startsWith('data:')) data.push(line.slice(5).trimStart());
  }
  if (data.length === 0) return;
  const text = data.join('\n');
  if (kind === 'chat' && text === '[DONE]') return;
  const json = parseJson(text);
  if (json === undefined) return record('answer', endpoint, [NOT_JSON]);
  record('answer', endpoint, kind === 'speech' ? checkSpeechEvent(name, json) : checkChatChunk(json));
}

const NOT_JSON: WireIssue = { path: [], kind: 'invalid', message: 'not JSON' };

function parseJson(text: string): unknown {
  try {
    return JSON.parse(text) as unknown;
  } catch {
    return undefined;
  }
}
