import * as C from '@mistralai/mistralai/models/components';
import { describe, expect, it } from 'vitest';
import {
  checkChatChunk,
  checkChatRequest,
  checkEmbeddingRequest,
  checkRealtimeClientMessage,
  checkRealtimeServerEvent,
  checkSpeechEvent,
  checkSpeechRequest,
  checkVoiceListQuery,
  MAX_APPEND_BYTES,
} from '../support/mistral-contract.ts';
import { checkWire, type WireIssue } from '../support/zod-wire-walker.ts';

const SESSION_UPDATE = { type: 'session.update', session: { audio_format: { encoding: 'pcm_s16le', sample_rate: 16_000 }, target_streaming_delay_ms: 480 } };

/** What the agent's lean client sends: every message kind, a tool, its call and result, an assistant prefix. */
const AGENT_REQUEST = {
  model: 'mistral-small-2603',
  max_tokens: 300,
  temperature: 0.3,
  stream: true,
  messages: [
    { role: 'system', content: 'Tu es une compagne attentive.' },
    { role: 'user', content: [{ type: 'text', text: 'Tu te souviens de ma fille ?' }] },
    { role: 'assistant', content: 'Je regarde.', tool_calls: [{ id: 'c1', type: 'function', function: { name: 'search_memory', arguments: '{"query":"fille"}' } }] },
    { role: 'tool', name: 'search_memory', tool_call_id: 'c1', content: '{"facts":[]}' },
    { role: 'assistant', content: 'Oui,', prefix: true },
  ],
  tools: [{ type: 'function', function: { name: 'search_memory', description: 'Cherche un souvenir.', parameters: { type: 'object', properties: { query: { type: 'string' } } } } }],
  tool_choice: 'auto',
};

const CHUNK = { id: 'cmpl-1', object: 'chat.completion.chunk', created: 1, model: 'm', choices: [{ index: 0, delta: { role: 'assistant', content: 'Bon' }, finish_reason: null }] };

const paths = (issues: WireIssue[]) => issues.map((i) => `${i.kind} ${i.path.join('.')}`);

describe('the walker over the SDK’s zod schemas', () => {
  it('passes a message the schema takes whole, inbound and outbound', () => {
    expect(checkWire(C.RealtimeTranscriptionSessionUpdateMessage$inboundSchema, SESSION_UPDATE, 'inbound')).toEqual([]);
    expect(checkWire(C.ChatCompletionStreamRequest$outboundSchema, AGENT_REQUEST, 'outbound')).toEqual([]);
    expect(checkWire(C.CompletionChunk$inboundSchema, CHUNK, 'inbound')).toEqual([]);
  });

  it('reports a key the schema does not name, at depth 0 and at depth 2, with its path and value (the parse alone strips them)', () => {
    const update = { ...SESSION_UPDATE, event_id: 'e1', session: { ...SESSION_UPDATE.session, audio_format: { encoding: 'pcm_s16le', sample_rate: 16_000, channels: 1 } } };
    expect(C.RealtimeTranscriptionSessionUpdateMessage$inboundSchema.safeParse(update).success).toBe(true);
    expect(checkWire(C.RealtimeTranscriptionSessionUpdateMessage$inboundSchema, update, 'inbound')).toEqual([
      { path: ['session', 'audio_format', 'channels'], kind: 'extra_forbidden', message: 'Extra inputs are not permitted', input: 1 },
      { path: ['event_id'], kind: 'extra_forbidden', message: 'Extra inputs are not permitted', input: 'e1' },
    ]);
  });

  it('reports a wrong type and a missing field on the wire’s names, not the schema’s camelCase', () => {
    expect(paths(checkWire(C.ChatCompletionStreamRequest$outboundSchema, { ...AGENT_REQUEST, max_tokens: '300' }, 'outbound'))).toEqual(['invalid max_tokens']);
    // EmbeddingRequest names the field `inputs` and sends it as `input`: the wire's name is the one that counts.
    expect(paths(checkWire(C.EmbeddingRequest$outboundSchema, { model: 'mistral-embed', inputs: ['a'] }, 'outbound'))).toEqual(['extra_forbidden inputs', 'invalid input']);
    expect(checkWire(C.EmbeddingRequest$outboundSchema, { model: 'mistral-embed', input: ['a'], encoding_format: 'float' }, 'outbound')).toEqual([]);
  });

  it('judges a union member by the option that takes it: the message’s own role, an intersection’s keys on either side', () => {
    const messages = [
      { role: 'user', content: [{ type: 'text', text: 'x', cache_control: 'ephemeral' }], name: 'Marie' },
      { role: 'assistant', content: 'x', reasoning_content: '…', tool_calls: [{ id: 'c1', type: 'function', function: { name: 'f', arguments: '{}' }, name: 'f' }] },
      { role: 'tool', tool_call_id: 'c1', content: 'ok' },
    ];
    expect(paths(checkWire(C.ChatCompletionStreamRequest$outboundSchema, { ...AGENT_REQUEST, messages }, 'outbound'))).toEqual([
      'extra_forbidden messages.0.content.0.cache_control',
      'extra_forbidden messages.0.name',
      'extra_forbidden messages.1.reasoning_content',
      'extra_forbidden messages.1.tool_calls.0.name',
    ]);
    expect(paths(checkWire(C.ChatCompletionStreamRequest$outboundSchema, { ...AGENT_REQUEST, messages: [{ role: 'narrator', content: 'x' }] }, 'outbound'))).toEqual(['invalid messages.0.role']);
  });

  it('does not take a catchall as leave to send anything: only the fields the schema names are documented', () => {
    expect(paths(checkWire(C.SpeechRequest$outboundSchema, { input: 'Bonjour', voice_id: 'v', language: 'fr' }, 'outbound'))).toEqual(['extra_forbidden language']);
  });
});

describe('one check per endpoint', () => {
  it('realtime client messages are picked by type; an unknown type, an undocumented setting or an append over its bound is a break', () => {
    expect(checkRealtimeClientMessage(SESSION_UPDATE)).toEqual([]);
    expect(checkRealtimeClientMessage({ type: 'input_audio.append', audio: Buffer.alloc(MAX_APPEND_BYTES).toString('base64') })).toEqual([]);
    expect(checkRealtimeClientMessage({ type: 'input_audio.flush' })).toEqual([]);
    expect(checkRealtimeClientMessage({ type: 'input_audio.end' })).toEqual([]);
    expect(paths(checkRealtimeClientMessage({ type: 'session.update', session: { language: 'fr', context_bias: ['Marie'] } }))).toEqual(['extra_forbidden session.language', 'extra_forbidden session.context_bias']);
    expect(paths(checkRealtimeClientMessage({ type: 'input_audio.commit' }))).toEqual(['invalid type']);
    expect(paths(checkRealtimeClientMessage({ type: 'input_audio.append', audio: Buffer.alloc(MAX_APPEND_BYTES + 1).toString('base64') }))).toEqual(['invalid audio']);
  });

  it('HTTP requests: chat streamed or not, embeddings, speech, the voice list’s query', () => {
    expect(checkChatRequest(AGENT_REQUEST)).toEqual([]);
    const structured = { model: 'mistral-small-2603', messages: [{ role: 'user', content: 'x' }], response_format: { type: 'json_schema', json_schema: { name: 'response', schema: { type: 'object' }, strict: false } } };
    expect(checkChatRequest(structured)).toEqual([]);
    expect(paths(checkChatRequest({ ...structured, store: false }))).toEqual(['extra_forbidden store']);
    expect(checkEmbeddingRequest({ model: 'mistral-embed', input: ['a', 'b'], encoding_format: 'float' })).toEqual([]);
    expect(checkSpeechRequest({ model: 'voxtral-mini-tts-2603', input: 'Bonjour.', voice_id: 'fr_marie', response_format: 'opus', stream: true })).toEqual([]);
    expect(paths(checkSpeechRequest({ input: 'Bonjour.', response_format: 'ogg' }))).toEqual(['invalid response_format']);
    expect(checkVoiceListQuery(new URLSearchParams('limit=100&offset=0&type=preset'))).toEqual([]);
    expect(paths(checkVoiceListQuery(new URLSearchParams('limit=many&language=fr')))).toEqual(['extra_forbidden language', 'invalid limit']);
  });

  it('the fakes’ answers: realtime events by type, speech events by name and type, chat chunks', () => {
    const session = { request_id: 'r1', model: 'voxtral-mini-transcribe-realtime-2602', audio_format: { encoding: 'pcm_s16le', sample_rate: 16_000 }, target_streaming_delay_ms: null };
    expect(checkRealtimeServerEvent({ type: 'session.created', session })).toEqual([]);
    expect(paths(checkRealtimeServerEvent({ type: 'session.updated', session: { ...session, language: 'fr' } }))).toEqual(['extra_forbidden session.language']);
    expect(paths(checkRealtimeServerEvent({ type: 'transcription.done', text: 'Bonjour' }))).toEqual(['invalid model', 'invalid usage', 'invalid language']);
    expect(paths(checkRealtimeServerEvent({ type: 'transcript' }))).toEqual(['invalid type']);
    expect(checkSpeechEvent('speech.audio.delta', { type: 'speech.audio.delta', audio_data: 'AAAA' })).toEqual([]);
    expect(paths(checkSpeechEvent(undefined, { type: 'speech.audio.delta', audio_data: 'AAAA' }))).toEqual(['invalid event']);
    expect(paths(checkChatChunk({ ...CHUNK, choices: [{ ...CHUNK.choices[0], delta: { content: 'x', reasoning: 'y' } }] }))).toEqual(['extra_forbidden choices.0.delta.reasoning']);
  });
});
