import type { LanguageModelV4StreamPart } from '@ai-sdk/provider';
import { Mistral } from '@mistralai/mistralai';
import { CompleteAcceptEnum } from '@mistralai/mistralai/sdk/speech.js';
import { MISTRAL_EMBED_MODEL } from '../../../adapters/embedders/mistral-embed-client.ts';
import { SEARCH_MEMORY_TOOL } from '../../../adapters/fluxes/agent-flux.adapter.ts';
import { mistralSdkServerUrl } from '../../../adapters/mistral/base-url.ts';
import { DEFAULT_THROTTLE_PAUSE_MS, delay } from '../../../adapters/mistral/retry-after.ts';
import { MistralEndpoint } from '../../../adapters/mistral/mistral-endpoint.ts';
import { createModels } from '../../../adapters/models/model-provider.ts';
import { FIRST_AUDIO_MS } from '../../voice/fallback-speaker.ts';
import { decodable, MistralSpeaker, OPUS_FIRST_PACKET_MS } from '../../../adapters/voice/mistral-speaker.ts';
import { EMBEDDING_DIMENSIONS } from '../../../machines/memory/memory.port.ts';
import { OpusAnswerReader, type OpusAnswerKind } from '../../../machines/voice/opus-answer.ts';
import { honouringRetryAfter, messageOf, type CheckContext } from './context.ts';
import { HttpRefusal, refusalOf } from './http-refusal.ts';
import { formatMs } from './report.ts';
import { abortable, within } from './waits.ts';

/** The sentences spoken: short, French, as a reply's first sentence would be. */
export const SPEECH_SENTENCES = { pcm: 'Bonjour, je suis là.', opus: 'Il fait beau aujourd’hui.' } as const;
/** Enough for a greeting or a tool call: the probe pays for a few tokens, not a reply. */
const CHAT_MAX_TOKENS = 30;
/** `response_format: "pcm"`: 32-bit float samples at 24 kHz (mistral-speaker.ts). */
const SPEECH_PCM_RATE = 24_000;

/** One sentence of speech as it came: the time to its first delta and the deltas' bytes. */
interface Spoken {
  firstMs: number;
  deltas: Uint8Array[];
}

export function sdkClient(ctx: CheckContext): Mistral {
  // No SDK retries: the check retries a 429 itself, once, after its Retry-After.
  return new Mistral({ apiKey: ctx.apiKey, serverURL: mistralSdkServerUrl(ctx.config.MISTRAL_BASE_URL, ctx.config.KOHAMI_ENV), retryConfig: { strategy: 'none' } });
}

/** One PCM sentence, then one Opus sentence, as the speaker asks for them. */
export async function speechProbes(ctx: CheckContext, client: Mistral): Promise<void> {
  const { report } = ctx;
  const times: string[] = [];
  const slow: string[] = [];
  try {
    const pcm = await speak(ctx, client, 'pcm', SPEECH_SENTENCES.pcm);
    times.push(`PCM ${formatMs(pcm.firstMs)}`);
    if (pcm.firstMs > FIRST_AUDIO_MS) slow.push(`PCM over ${formatMs(FIRST_AUDIO_MS)}: espeak-ng speaks each sentence instead`);
    const bytes = concat(pcm.deltas);
    const format = sampleFormat(bytes);
    if (format === 'float32') report.set('speech-pcm', 'ok', `float32, ${(bytes.length / 4 / SPEECH_PCM_RATE).toFixed(1)} s at 24 kHz in ${pcm.deltas.length} deltas`);
    else report.set('speech-pcm', 'break', `${bytes.length} bytes in ${pcm.deltas.length} deltas, not float32 samples (${format}): the speaker would play noise`);
  } catch (err) {
    report.set('speech-pcm', 'break', `failed: ${messageOf(err)}`);
  }
  try {
    const opus = await speak(ctx, client, 'opus', SPEECH_SENTENCES.opus);
    times.push(`Opus ${formatMs(opus.firstMs)}`);
    if (opus.firstMs > OPUS_FIRST_PACKET_MS) slow.push(`Opus over ${formatMs(OPUS_FIRST_PACKET_MS)}: the speaker asks PCM from then on`);
    const container = containerOf(opus.deltas);
    if (container.startsWith(`${CONTAINERS.ogg}:`)) report.set('speech-opus', 'ok', `${container} in ${opus.deltas.length} deltas`);
    else report.set('speech-opus', 'note', `${container}, in ${opus.deltas.length} deltas: the speaker reads what it sniffs (not Opus: PCM instead)`);
  } catch (err) {
    const refusal = refusalOf(err);
    const refused = refusal && refusal.status >= 400 && refusal.status < 500 && refusal.status !== 429;
    report.set('speech-opus', 'note', `${refused ? 'refused' : 'failed'}: ${messageOf(err)}; the speaker asks PCM instead`);
  }
  if (times.length === 0) return report.set('speech-first-packet', 'note', 'not measured: no sentence spoken');
  report.set('speech-first-packet', slow.length > 0 ? 'note' : 'ok', [times.join(', '), ...slow].join('; '));
}

/** The runtime's own voice check at start (`GET /v1/audio/voices`, every page): is MISTRAL_TTS_VOICE listed? */
export async function voiceProbe(ctx: CheckContext): Promise<void> {
  const { config } = ctx;
  const voice = config.MISTRAL_TTS_VOICE;
  const speaker = new MistralSpeaker({ apiKey: ctx.apiKey, baseUrl: config.MISTRAL_BASE_URL, env: config.KOHAMI_ENV, model: config.MISTRAL_TTS_MODEL, voice });
  let found = await abortable(speaker.checkVoice(ctx.bounds.httpMs), ctx.signal);
  // A 429 on the list is reported and retried once after its Retry-After, as every other call of the check.
  if (found.kind === 'unchecked' && found.rateLimited) {
    ctx.report.rateLimits.push({ call: 'voice list', retryAfterMs: found.rateLimited.retryAfterMs });
    await delay(Math.min(found.rateLimited.retryAfterMs ?? DEFAULT_THROTTLE_PAUSE_MS, ctx.bounds.retryCapMs), ctx.signal);
    found = await abortable(speaker.checkVoice(ctx.bounds.httpMs), ctx.signal);
  }
  if (found.kind === 'listed') return ctx.report.set('voice', 'ok', `${voice} is listed`);
  if (found.kind === 'unchecked') return ctx.report.set('voice', 'note', `the list could not be read: ${found.reason} (the runtime starts all the same)`);
  const french = found.voices.filter((v) => v.toLowerCase().startsWith('fr'));
  if (french[0]) ctx.report.advise('MISTRAL_TTS_VOICE', french[0], `${voice} is not listed; this French voice is`);
  ctx.report.set('voice', 'break', `${voice} is not among the ${found.voices.length} voices listed (French: ${french.slice(0, 5).join(', ') || 'none'}): the runtime refuses to start`);
}

/** One streamed chat as the agent makes it: its model, its request body, the `search_memory` tool. */
export async function chatProbe(ctx: CheckContext): Promise<void> {
  const { config } = ctx;
  const agent = createModels({ apiKey: ctx.apiKey, baseUrl: config.MISTRAL_BASE_URL, agentModelId: config.MISTRAL_AGENT_MODEL, subagentModelId: config.MISTRAL_SUBAGENT_MODEL, env: config.KOHAMI_ENV }).agent;
  const call = new AbortController();
  const stop = () => call.abort(ctx.signal.reason);
  ctx.signal.addEventListener('abort', stop, { once: true });
  let start = 0;
  try {
    const { stream } = await honouringRetryAfter(ctx, 'chat', () => {
      // Timed from the attempt served: a 429 and its wait are not the model's latency.
      start = performance.now();
      return within(
        agent.doStream({
          prompt: [
            { role: 'system', content: 'Tu es un compagnon bienveillant. Réponds en une phrase courte.' },
            { role: 'user', content: [{ type: 'text', text: 'Bonjour, comment allez-vous ?' }] },
          ],
          tools: [SEARCH_MEMORY_TOOL],
          toolChoice: { type: 'auto' },
          maxOutputTokens: CHAT_MAX_TOKENS,
          abortSignal: call.signal,
        }),
        ctx.bounds.httpMs,
        'no answer',
        ctx.signal,
      );
    });
    const parts = await readParts(ctx, stream);
    const texts = parts.filter((p) => p.part.type === 'text-delta');
    const tools = parts.filter((p) => p.part.type === 'tool-call');
    const finish = parts.find((p) => p.part.type === 'finish')?.part;
    const error = parts.find((p) => p.part.type === 'error')?.part;
    if (finish?.type === 'finish') {
      ctx.report.spent.chatInputTokens += finish.usage.inputTokens.total ?? 0;
      ctx.report.spent.chatOutputTokens += finish.usage.outputTokens.total ?? 0;
    }
    if (error?.type === 'error') return ctx.report.set('chat', 'break', `the stream carried an error: ${messageOf(error.error)}`);
    if (!finish || texts.length + tools.length === 0) return ctx.report.set('chat', 'break', `the stream ended without ${finish ? 'text or a tool call' : 'its finish'}`);
    const first = (texts[0] ?? tools[0])!.at - start;
    const what = tools.length > 0 ? 'a search_memory call' : `${texts.length} text chunk${texts.length === 1 ? '' : 's'}`;
    ctx.report.set('chat', 'ok', `streamed ${what}, the first in ${formatMs(first)}; the tool's schema accepted`);
  } catch (err) {
    const refusal = refusalOf(err);
    const why = refusal && (refusal.status === 400 || refusal.status === 422) ? ' (the request carries the search_memory tool: its schema may be refused)' : '';
    ctx.report.set('chat', 'break', `failed: ${messageOf(err)}${why}`);
  } finally {
    ctx.signal.removeEventListener('abort', stop);
    call.abort();
  }
}

/** One embedding, on the runtime's endpoint client: is it 1,024 wide? */
export async function embeddingProbe(ctx: CheckContext): Promise<void> {
  const endpoint = new MistralEndpoint({ apiKey: ctx.apiKey, baseUrl: ctx.config.MISTRAL_BASE_URL, env: ctx.config.KOHAMI_ENV }, 'embeddings', 'application/json');
  const body = JSON.stringify({ model: MISTRAL_EMBED_MODEL, input: ['Bonjour'], encoding_format: 'float' });
  try {
    const answer = await honouringRetryAfter(ctx, 'embeddings', async () => {
      const res = await within(endpoint.send(body, ctx.signal), ctx.bounds.httpMs, 'no answer', ctx.signal);
      const text = await within(res.toArray().then((chunks) => Buffer.concat(chunks as Buffer[]).toString('utf8')), ctx.bounds.callMs, 'no whole answer', ctx.signal);
      if (res.statusCode !== 200) throw new HttpRefusal('embeddings', res.statusCode ?? 0, res.headers);
      return JSON.parse(text) as { data?: Array<{ embedding?: unknown[] }>; usage?: { total_tokens?: number } };
    });
    ctx.report.spent.embeddingTokens += answer.usage?.total_tokens ?? 0;
    const width = answer.data?.[0]?.embedding?.length;
    if (width === EMBEDDING_DIMENSIONS) return ctx.report.set('embedding', 'ok', `${width.toLocaleString('en-US')} wide`);
    ctx.report.set('embedding', 'break', `${width === undefined ? 'no vector' : `${width} wide`}: the memory index holds ${EMBEDDING_DIMENSIONS.toLocaleString('en-US')}`);
  } catch (err) {
    ctx.report.set('embedding', 'break', `failed: ${messageOf(err)}`);
  }
}

/** Every 429 met, with its Retry-After: said, never a failure. */
export function retryAfterRow(ctx: CheckContext): void {
  const met = ctx.report.rateLimits;
  if (met.length === 0) return ctx.report.set('retry-after', 'ok', 'no 429 met');
  const shown = met.map((m) => `${m.call} (${m.retryAfterMs === undefined ? 'no Retry-After' : `Retry-After ${m.retryAfterMs / 1000} s`})`).join(', ');
  ctx.report.set('retry-after', 'note', `429 on ${shown}; each call retried once after it`);
}

async function speak(ctx: CheckContext, client: Mistral, format: 'pcm' | 'opus', text: string): Promise<Spoken> {
  const { config, bounds } = ctx;
  return honouringRetryAfter(ctx, `speech (${format})`, async () => {
    const request = new AbortController();
    const stop = () => request.abort(ctx.signal.reason);
    ctx.signal.addEventListener('abort', stop, { once: true });
    const start = performance.now();
    try {
      const events = await within(
        client.audio.speech.complete(
          { model: config.MISTRAL_TTS_MODEL, input: text, voiceId: config.MISTRAL_TTS_VOICE, responseFormat: format, stream: true },
          { signal: request.signal, acceptHeaderOverride: CompleteAcceptEnum.textEventStream },
        ),
        bounds.httpMs,
        'no answer',
        ctx.signal,
      );
      const iterator = events[Symbol.asyncIterator]();
      const deltas: Uint8Array[] = [];
      let firstMs = 0;
      for (;;) {
        const left = deltas.length === 0 ? start + bounds.httpMs - performance.now() : start + bounds.callMs - performance.now();
        const next = await within(iterator.next(), Math.max(0, left), deltas.length === 0 ? 'no audio' : 'no end of the sentence', ctx.signal);
        if (next.done || next.value.data.type === 'speech.audio.done') break;
        const data = next.value.data;
        if (data.type !== 'speech.audio.delta' || !('audioData' in data)) continue;
        if (deltas.length === 0) firstMs = performance.now() - start;
        deltas.push(Buffer.from(data.audioData, 'base64'));
      }
      if (deltas.length === 0) throw new Error('the stream ended without audio');
      ctx.report.spent.speechCharacters += text.length;
      return { firstMs, deltas };
    } finally {
      ctx.signal.removeEventListener('abort', stop);
      request.abort();
    }
  });
}

async function readParts(ctx: CheckContext, stream: ReadableStream<LanguageModelV4StreamPart>): Promise<Array<{ part: LanguageModelV4StreamPart; at: number }>> {
  const reader = stream.getReader();
  const parts: Array<{ part: LanguageModelV4StreamPart; at: number }> = [];
  const deadline = performance.now() + ctx.bounds.callMs;
  try {
    for (;;) {
      const next = await within(reader.read(), Math.max(0, deadline - performance.now()), 'no end of the stream', ctx.signal);
      if (next.done) return parts;
      parts.push({ part: next.value, at: performance.now() });
    }
  } finally {
    reader.cancel().catch(() => undefined);
  }
}

/**
 * What float32 PCM should look like: every sample finite and within [−1, 1], none vanishingly small
 * but zero. s16 bytes read as float32 fail it on about half their samples.
 */
export function sampleFormat(bytes: Uint8Array): 'float32' | 'silent' | 'not float32' {
  if (bytes.length < 4 || bytes.length % 4 !== 0) return 'not float32';
  const view = new DataView(bytes.buffer, bytes.byteOffset, bytes.byteLength);
  let plausible = 0;
  let zero = 0;
  const n = bytes.length / 4;
  for (let i = 0; i < n; i++) {
    const x = view.getFloat32(i * 4, true);
    if (x === 0) zero++;
    else if (Number.isFinite(x) && Math.abs(x) <= 1 && Math.abs(x) >= 1e-20) plausible++;
  }
  if (zero === n) return 'silent';
  return plausible + zero >= 0.99 * n ? 'float32' : 'not float32';
}

/** The container of `response_format: "opus"`, told and read as the speaker tells and reads it (OpusAnswerReader). */
export function containerOf(deltas: Uint8Array[]): string {
  const reader = new OpusAnswerReader(decodable);
  let packets = 0;
  try {
    for (const delta of deltas) packets += reader.push(delta).length;
    reader.end();
  } catch (err) {
    return `${CONTAINERS[reader.kind ?? 'other']}, unreadable (${messageOf(err)})`;
  }
  if (reader.kind === 'other') return `${CONTAINERS.other} (first bytes ${Buffer.from(deltas[0]!.subarray(0, 4)).toString('hex')})`;
  return `${CONTAINERS[reader.kind!]}: ${packets} packets`;
}

const CONTAINERS: Record<OpusAnswerKind, string> = { ogg: 'Ogg Opus', packets: 'raw Opus packets, one per delta', other: 'not Opus' };

function concat(parts: Uint8Array[]): Uint8Array {
  return Buffer.concat(parts);
}
