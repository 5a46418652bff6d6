import { readFile, writeFile } from 'node:fs/promises';
import { setTimeout as sleep } from 'node:timers/promises';
import WebSocket from 'ws';
import { opusCodec } from '../../adapters/voice/opus-codec.ts';
import { decodeAudioFrame, decodeFrameHeader } from '../protocol/frame-header.ts';
import { INPUT_SAMPLE_RATE, type OpusDecoderPort } from '../../machines/voice/voice.port.ts';
import { boundedWait } from './bounded-wait.ts';
import { readWav, WavFormatError, writeWav } from './wav.ts';

export interface VoiceFileOptions {
  url: string;
  token: string;
  wav: string;
  out?: string | undefined;
  /** `opus`: the microphone goes as Opus packets (16 kHz) and the reply is asked for in Opus first. Default `pcm`. */
  codec?: 'pcm' | 'opus' | undefined;
  /** Silence streamed after the file, at least: endpointing needs it to hear the end of speech. */
  tailMs: number;
  /** After the file and its tail, how long to wait at most for the replies to finish. */
  settleMs: number;
  write: (text: string) => void;
}

const FRAME_MS = 20;
const FRAME_SAMPLES = (INPUT_SAMPLE_RATE * FRAME_MS) / 1000;
/** Rates the reply WAV can be written at, best first. */
const OUTPUT_RATES = [24_000, 16_000, 48_000];
/** Opus replies are decoded at the rate the WAV is written at: the speech service's own 24 kHz. */
const OPUS_OUTPUT_RATE = 24_000;
/** Bound on the WebSocket's opening handshake: a host that takes the TCP connection and says nothing. */
export const CONNECT_TIMEOUT_MS = 10_000;
/** Bound on the runtime's `session.ready` after `session.start` (it answers within milliseconds). */
export const READY_TIMEOUT_MS = 10_000;

const CONVERT_HINT =
  'convert it with:\n  sox IN.wav -r 16000 -c 1 -b 16 -e signed-integer OUT.wav\n  ffmpeg -i IN.wav -ar 16000 -ac 1 -c:a pcm_s16le OUT.wav';

/** A CLI failure with a message for the user and an exit code. */
export class VoiceFileError extends Error {
  readonly exitCode: number;

  constructor(
    message: string,
    exitCode: number,
  ) {
    super(message);
    this.exitCode = exitCode;
  }
}

/**
 * `npm run kiosk -- --voice FILE.wav [--out reply.wav]`: the WAV is the microphone, streamed in real
 * time in 20 ms frames then silence; replies are printed as captions and their audio written to --out.
 * Resolves when every reply has ended (or `settleMs` after the tail).
 */
export async function runVoiceFile(o: VoiceFileOptions): Promise<void> {
  const print = (line: string) => o.write(`${line}\n`);
  let input: Int16Array;
  try {
    input = readWav(new Uint8Array(await readFile(o.wav)), INPUT_SAMPLE_RATE).samples;
  } catch (err) {
    if (err instanceof WavFormatError) throw new VoiceFileError(`${o.wav}: ${err.message}; ${CONVERT_HINT}`, 2);
    throw new VoiceFileError(`cannot read ${o.wav}: ${(err as Error).message}`, 2);
  }

  const socket = new WebSocket(o.url, { headers: { authorization: `Bearer ${o.token}` } });
  const opened = new Promise<void>((resolve, reject) => {
    socket.once('open', resolve);
    socket.once('unexpected-response', (req, res) => {
      req.destroy();
      reject(new VoiceFileError(`refused: HTTP ${res.statusCode} (check the token)`, 1));
    });
    // `on`, not `once`: a later socket error (mid-stream, or after a terminate) must not go unhandled.
    socket.on('error', (err) => reject(new VoiceFileError(`cannot connect to ${o.url}: ${err.message}`, 1)));
  });
  await boundedWait(socket, opened, CONNECT_TIMEOUT_MS, () => new VoiceFileError(`no answer from ${o.url} within ${CONNECT_TIMEOUT_MS / 1000} s (is a kohami runtime listening there?)`, 1));

  // Reply audio, per turn, placed at each frame's sample offset.
  const replies: Array<{ turnId: string; chunks: Array<{ offset: number; pcm: Int16Array }> }> = [];
  let outputRate = 0;
  let outputEncoding = 'pcm_s16le';
  // Opus replies: one decoder per turn (each turn is its own Opus stream), freed when the turn's audio ends.
  const decoders = new Map<string, OpusDecoderPort>();
  const closeDecoder = (turnId: string) => {
    decoders.get(turnId)?.close();
    decoders.delete(turnId);
  };
  let speaking = false;
  const awaiting = new Set<string>(); // turns heard whose reply (text and audio) has not ended
  const audioOpen = new Set<string>();
  // Turns the runtime paused (speech with no word over the reply): their playback.done waits for the resume.
  const paused = new Set<string>();
  const heldDone = new Set<string>();
  let caption = false;
  let failure: VoiceFileError | null = null;
  let closed = false;
  let resolveReady!: (audio: { voiceInput?: boolean } | undefined) => void;
  const ready = new Promise<{ voiceInput?: boolean } | undefined>((resolve) => (resolveReady = resolve));

  socket.on('close', () => {
    closed = true;
    resolveReady(undefined);
  });
  socket.on('message', (raw, isBinary) => {
    let f: Record<string, unknown> & { type: string; turnId?: string };
    try {
      if (isBinary) {
        const bytes = new Uint8Array(raw as Buffer);
        const frame = outputEncoding === 'opus' ? decodeFrameHeader(bytes) : decodeAudioFrame(bytes);
        const reply = replies.find((r) => r.turnId === frame.turnId);
        const decoder = decoders.get(frame.turnId);
        if ('pcm' in frame) reply?.chunks.push({ offset: frame.sampleOffset, pcm: frame.pcm });
        // A cleared turn's packets have no decoder any more: dropped.
        else if (reply && decoder && frame.payload.length > 0) reply.chunks.push({ offset: frame.sampleOffset, pcm: decoder.decode(frame.payload) });
        return;
      }
      f = JSON.parse(raw.toString()) as typeof f;
    } catch (err) {
      // Not the kiosk protocol: say so and stop, rather than die on an exception.
      failure ??= new VoiceFileError(`${o.url} sent a frame that is not the kiosk protocol (${(err as Error).message}): is it a kohami runtime?`, 1);
      resolveReady(undefined);
      socket.terminate();
      return;
    }
    const endCaption = () => {
      if (caption) print('');
      caption = false;
    };
    switch (f.type) {
      case 'session.ready': {
        const audio = f.audio as { input?: { encoding: string; sampleRate: number }; output?: { encoding: string; sampleRate: number }; voiceInput?: boolean } | undefined;
        if (f.mode !== 'voice' || !audio) {
          failure = new VoiceFileError('this runtime has no voice mode (session.ready without audio): update it', 3);
          return resolveReady(undefined);
        }
        outputRate = audio.output?.sampleRate ?? 0;
        outputEncoding = audio.output?.encoding ?? 'pcm_s16le';
        print(`session ${String(f.sessionId)} — voice, microphone ${audio.input?.encoding} ${audio.input?.sampleRate} Hz, reply audio ${outputEncoding} ${outputRate} Hz`);
        return resolveReady(audio);
      }
      case 'vad':
        speaking = f.state === 'speech_started';
        return print(`[vad ${String(f.state)}]`);
      case 'transcript.delta':
        return print(`  … ${String(f.text)}`);
      case 'transcript.final':
        awaiting.add(f.turnId!);
        return print(`vous> ${String(f.text)}`);
      case 'reply.delta':
        if (!caption) o.write('kohami> ');
        caption = true;
        o.write(String(f.text));
        return;
      case 'reply.done':
        if (!caption) o.write(`kohami> ${String(f.text)}`);
        caption = true;
        endCaption();
        print(`        [${String(f.flux)}, ${String(f.latencyMs)} ms${f.interrupted ? ', interrupted' : ''}]`);
        if (!audioOpen.has(f.turnId!)) awaiting.delete(f.turnId!);
        return;
      case 'reply.audio.start':
        awaiting.add(f.turnId!);
        audioOpen.add(f.turnId!);
        replies.push({ turnId: f.turnId!, chunks: [] });
        if (f.encoding === 'opus') decoders.set(f.turnId!, opusCodec().decoder(f.sampleRate as number));
        return;
      case 'reply.audio.end':
      case 'reply.audio.clear':
        endCaption();
        print(`[audio ${f.turnId} ${f.type === 'reply.audio.end' ? `${String(f.durationMs)} ms` : 'cleared'}]`);
        audioOpen.delete(f.turnId!);
        awaiting.delete(f.turnId!);
        closeDecoder(f.turnId!);
        // A file kiosk "plays" instantly: all of it was heard — once a pause is over.
        if (f.type === 'reply.audio.clear') {
          paused.delete(f.turnId!);
          heldDone.delete(f.turnId!);
        } else if (paused.has(f.turnId!)) heldDone.add(f.turnId!);
        else socket.send(JSON.stringify({ type: 'playback.done', turnId: f.turnId }));
        return;
      case 'reply.audio.pause':
      case 'reply.audio.resume':
        endCaption();
        print(`[audio ${f.turnId} ${f.type === 'reply.audio.pause' ? 'paused' : 'resumed'}]`);
        if (f.type === 'reply.audio.pause') return void paused.add(f.turnId!);
        paused.delete(f.turnId!);
        if (heldDone.delete(f.turnId!)) socket.send(JSON.stringify({ type: 'playback.done', turnId: f.turnId }));
        return;
      case 'error':
        endCaption();
        if (f.code === 'speech_unavailable') failure ??= new VoiceFileError(`[error speech_unavailable] ${String(f.message)}`, 3);
        if (f.code === 'unsupported_audio_format') {
          // No session starts: say which option to change rather than wait for one.
          failure ??= new VoiceFileError(`[error unsupported_audio_format] ${String(f.message)}${opus ? ' (try --codec pcm)' : ''}`, 3);
          resolveReady(undefined);
        }
        return print(`[error ${String(f.code)}] ${String(f.message)}`);
      case 'session.closed':
        endCaption();
        return print(`[session closed: ${String(f.reason)}]`);
    }
  });

  const opus = o.codec === 'opus';
  socket.send(
    JSON.stringify({
      type: 'session.start',
      mode: 'voice',
      audio: {
        input: { encoding: opus ? 'opus' : 'pcm_s16le', sampleRate: INPUT_SAMPLE_RATE },
        // Opus first when asked for; PCM after it is what a runtime without Opus answers with.
        output: {
          accept: [
            ...(opus ? [{ encoding: 'opus', sampleRate: OPUS_OUTPUT_RATE }] : []),
            ...OUTPUT_RATES.map((sampleRate) => ({ encoding: 'pcm_s16le', sampleRate })),
          ],
        },
        // No loudspeaker feeds this microphone.
        kiosk: { aec: true },
      },
    }),
  );
  const audio = await boundedWait(socket, ready, READY_TIMEOUT_MS, () => new VoiceFileError(`${o.url} accepted the connection but started no session within ${READY_TIMEOUT_MS / 1000} s (is it a kohami runtime?)`, 1));
  if (failure) throw failure;
  if (!audio) throw new VoiceFileError('the runtime closed the connection before the session started', 1);
  if (audio.voiceInput === false) {
    socket.close();
    throw new VoiceFileError(
      'this runtime has no speech-to-text (offline: start it with MISTRAL_API_KEY set); typed turns are still spoken: npm run kiosk',
      3,
    );
  }

  // Real time: frame i leaves at t0 + 20·i ms, however late the previous one was.
  const silence = new Int16Array(FRAME_SAMPLES);
  // The microphone's Opus stream: 20 ms packets at 16 kHz, one per binary frame, in order.
  const encoder = opus ? opusCodec().encoder(INPUT_SAMPLE_RATE) : null;
  const t0 = performance.now();
  const fileFrames = Math.ceil(input.length / FRAME_SAMPLES);
  const tailFrames = Math.ceil(o.tailMs / FRAME_MS);
  const lastFrame = fileFrames + tailFrames + Math.ceil(o.settleMs / FRAME_MS);
  print(`streaming ${(input.length / INPUT_SAMPLE_RATE).toFixed(1)} s of audio in real time…`);
  for (let i = 0; i < lastFrame && !closed && !failure; i++) {
    if (i >= fileFrames + tailFrames && awaiting.size === 0 && !speaking) break;
    const wait = t0 + i * FRAME_MS - performance.now();
    if (wait > 0) await sleep(wait);
    const frame = i < fileFrames ? input.subarray(i * FRAME_SAMPLES, (i + 1) * FRAME_SAMPLES) : silence;
    const bytes = new Int16Array(FRAME_SAMPLES);
    bytes.set(frame);
    socket.send(encoder ? encoder.encode(bytes) : Buffer.from(bytes.buffer));
  }
  encoder?.close();
  for (const turnId of [...decoders.keys()]) closeDecoder(turnId);
  if (awaiting.size > 0) print(`(stopped waiting after ${o.settleMs} ms: turn(s) ${[...awaiting].join(', ')} unfinished)`);
  if (!closed) {
    socket.send(JSON.stringify({ type: 'session.end' }));
    socket.close();
  }

  if (o.out) {
    const samples = concatReplies(replies);
    await writeFile(o.out, writeWav({ sampleRate: outputRate || OUTPUT_RATES[0]!, samples }));
    print(`reply audio: ${(samples.length / (outputRate || OUTPUT_RATES[0]!)).toFixed(2)} s written to ${o.out}`);
  }
  if (failure) throw failure;
}

/** Every turn's audio, one after the other, each frame at its own sample offset (gaps left silent). */
function concatReplies(replies: Array<{ chunks: Array<{ offset: number; pcm: Int16Array }> }>): Int16Array {
  const lengths = replies.map((r) => Math.max(0, ...r.chunks.map((c) => c.offset + c.pcm.length)));
  const out = new Int16Array(lengths.reduce((a, b) => a + b, 0));
  let base = 0;
  replies.forEach((r, i) => {
    for (const c of r.chunks) out.set(c.pcm, base + c.offset);
    base += lengths[i]!;
  });
  return out;
}
