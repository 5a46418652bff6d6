import { writeFile } from 'node:fs/promises';
import { DEFAULT_BOUNDS, KioskClient, KioskError, pcmFromBytes, type SessionReadyFrame } from '@kohami/kiosk-client';
import { pcmFrames, readWavFile, streamAudio, WavFormatError, writeWav, wsSocket } from '@kohami/kiosk-client/node';
import WebSocket from 'ws';
import { opusCodec } from '../../adapters/voice/opus-codec.ts';
import { INPUT_SAMPLE_RATE, type OpusDecoderPort } from '../../machines/voice/voice.port.ts';

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
/** Bounds on the WebSocket's opening handshake and on `session.ready`: the client package's defaults. */
export const CONNECT_TIMEOUT_MS = DEFAULT_BOUNDS.connectTimeoutMs;
/**
 * The silence after the file before the session may end with no turn running: the runtime hears the
 * audio a little behind real time, more on a loaded machine (1.5 s was too little at load 10).
 */
export const DEFAULT_TAIL_MS = 3000;
/**
 * Once the runtime says the senior stopped speaking, what follows — the final transcript, or the SOS line
 * when it does not come within STT_BUDGET_MS (2 s by default) — is waited for this long at most before the
 * session may end: an utterance the runtime drops (a burst too short to be speech) is followed by nothing.
 */
export const ANSWER_WAIT_MS = 10_000;
/** How long after the tail replies may still run before the file kiosk stops waiting for them. */
export const DEFAULT_SETTLE_MS = 20_000;
export const READY_TIMEOUT_MS = DEFAULT_BOUNDS.readyTimeoutMs;

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

/** What a failed connection says, as the CLI's error. */
function connectionError(url: string, err: KioskError): VoiceFileError {
  switch (err.code) {
    case 'refused':
      return new VoiceFileError(`${err.message} (check the token)`, 1);
    case 'bad_frame':
      return new VoiceFileError(`${url} sent a frame that is not the kiosk protocol (${err.message}): is it a kohami runtime?`, 1);
    case 'start_refused':
      // No session starts: say which option to change rather than wait for one.
      if (err.serverError?.code === 'unsupported_audio_format') return new VoiceFileError(`[error unsupported_audio_format] ${err.serverError.message}`, 3);
      return new VoiceFileError(err.message, 1);
    default:
      return new VoiceFileError(err.message, 1);
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
    input = await readWavFile(o.wav, INPUT_SAMPLE_RATE);
  } catch (err) {
    if (err instanceof WavFormatError) throw new VoiceFileError(`${o.wav}: ${err.message}; ${CONVERT_HINT}`, 2);
    throw new VoiceFileError(`cannot read ${o.wav}: ${(err as Error).message}`, 2);
  }

  const opus = o.codec === 'opus';
  const client = new KioskClient({ url: o.url, token: o.token, socket: wsSocket(WebSocket), connectTimeoutMs: CONNECT_TIMEOUT_MS, readyTimeoutMs: READY_TIMEOUT_MS, reconnect: false });
  // Reply audio, per turn, placed at each frame's sample offset.
  const replies: Array<{ turnId: string; chunks: Array<{ offset: number; pcm: Int16Array }> }> = [];
  let outputEncoding = 'pcm_s16le';
  // Opus replies: one decoder per turn (each turn is its own Opus stream), freed when the turn's audio ends.
  const decoders = new Map<string, OpusDecoderPort>();
  const closeDecoder = (turnId: string) => {
    decoders.get(turnId)?.close();
    decoders.delete(turnId);
  };
  let speaking = false;
  // When the runtime last said the senior stopped speaking, its answer (a transcript, or the SOS line) not in yet.
  let unanswered: number | null = null;
  const awaiting = new Set<string>(); // turns heard whose reply (text and audio) has not ended
  const audioOpen = new Set<string>();
  const audioStarted = new Set<string>();
  // Turns the runtime paused (speech with no word over the reply): their playback.done waits for the resume.
  const paused = new Set<string>();
  const heldDone = new Set<string>();
  let caption = false;
  let failure: VoiceFileError | null = null;
  const endCaption = () => {
    if (caption) print('');
    caption = false;
  };

  client.on('client.error', (err) => {
    // Not the kiosk protocol: say so and stop, rather than go on with a runtime that is not one.
    if (err.code !== 'bad_frame') return;
    failure ??= connectionError(o.url, err);
    client.close();
  });
  client.on('audio', (frame) => {
    const reply = replies.find((r) => r.turnId === frame.turnId);
    if (!reply) return;
    if (outputEncoding !== 'opus') return void reply.chunks.push({ offset: frame.sampleOffset, pcm: pcmFromBytes(frame.payload) });
    // A cleared turn's packets have no decoder any more: dropped.
    const decoder = decoders.get(frame.turnId);
    if (decoder && frame.payload.length > 0) reply.chunks.push({ offset: frame.sampleOffset, pcm: decoder.decode(frame.payload) });
  });
  client.on('vad', (f) => {
    speaking = f.state === 'speech_started';
    unanswered = speaking ? null : performance.now();
    print(`[vad ${f.state}]`);
  });
  client.on('transcript.delta', (f) => print(`  … ${f.text}`));
  client.on('transcript.final', (f) => {
    unanswered = null;
    awaiting.add(f.turnId);
    print(`vous> ${f.text}`);
  });
  client.on('reply.delta', (f) => {
    if (!caption) o.write('kohami> ');
    caption = true;
    o.write(f.text);
  });
  client.on('reply.done', (f) => {
    if (!caption) o.write(`kohami> ${f.text}`);
    caption = true;
    endCaption();
    print(`        [${f.flux}, ${f.latencyMs} ms${f.interrupted ? ', interrupted' : ''}]`);
    // Every reply is spoken, and its audio may begin after its text is whole (a slow speech service).
    const audioDue = !audioStarted.has(f.turnId) && f.text !== '' && !f.interrupted;
    if (!audioOpen.has(f.turnId) && !audioDue) awaiting.delete(f.turnId);
  });
  client.on('reply.audio.start', (f) => {
    unanswered = null;
    awaiting.add(f.turnId);
    audioOpen.add(f.turnId);
    audioStarted.add(f.turnId);
    replies.push({ turnId: f.turnId, chunks: [] });
    if (f.encoding === 'opus') decoders.set(f.turnId, opusCodec().decoder(f.sampleRate));
  });
  const audioOver = (turnId: string, how: string) => {
    endCaption();
    print(`[audio ${turnId} ${how}]`);
    audioOpen.delete(turnId);
    awaiting.delete(turnId);
    closeDecoder(turnId);
  };
  client.on('reply.audio.end', (f) => {
    audioOver(f.turnId, `${f.durationMs} ms`);
    // A file kiosk "plays" instantly: all of it was heard — once a pause is over.
    if (paused.has(f.turnId)) heldDone.add(f.turnId);
    else client.playbackDone(f.turnId);
  });
  client.on('reply.audio.clear', (f) => {
    audioOver(f.turnId, 'cleared');
    paused.delete(f.turnId);
    heldDone.delete(f.turnId);
  });
  client.on('reply.audio.pause', (f) => {
    endCaption();
    print(`[audio ${f.turnId} paused]`);
    paused.add(f.turnId);
  });
  client.on('reply.audio.resume', (f) => {
    endCaption();
    print(`[audio ${f.turnId} resumed]`);
    paused.delete(f.turnId);
    if (heldDone.delete(f.turnId)) client.playbackDone(f.turnId);
  });
  client.on('error', (f) => {
    endCaption();
    if (f.code === 'speech_unavailable') failure ??= new VoiceFileError(`[error speech_unavailable] ${f.message}`, 3);
    print(`[error ${f.code}] ${f.message}`);
  });
  client.on('session.closed', (f) => {
    endCaption();
    print(`[session closed: ${f.reason}]`);
  });

  let ready: SessionReadyFrame;
  try {
    ready = await client.connect({
      mode: 'voice',
      audio: {
        input: { encoding: opus ? 'opus' : 'pcm_s16le', sampleRate: INPUT_SAMPLE_RATE },
        // Opus first when asked for; PCM after it is what a runtime without Opus answers with.
        output: {
          accept: [...(opus ? [{ encoding: 'opus', sampleRate: OPUS_OUTPUT_RATE }] : []), ...OUTPUT_RATES.map((sampleRate) => ({ encoding: 'pcm_s16le', sampleRate }))],
        },
        // No loudspeaker feeds this microphone.
        kiosk: { aec: true },
      },
    });
  } catch (err) {
    if (!(err instanceof KioskError)) throw err;
    const failed = connectionError(o.url, err);
    throw err.serverError?.code === 'unsupported_audio_format' && opus ? new VoiceFileError(`${failed.message} (try --codec pcm)`, failed.exitCode) : (failure ?? failed);
  }
  const audio = ready.audio;
  if (ready.mode !== 'voice' || !audio) {
    client.close();
    throw new VoiceFileError('this runtime has no voice mode (session.ready without audio): update it', 3);
  }
  outputEncoding = audio.output.encoding;
  const outputRate = audio.output.sampleRate;
  print(`session ${ready.sessionId} — voice, microphone ${audio.input.encoding} ${audio.input.sampleRate} Hz, reply audio ${outputEncoding} ${outputRate} Hz`);
  if (audio.voiceInput === false) {
    client.close();
    throw new VoiceFileError(
      'this runtime has no speech-to-text (offline: start it with MISTRAL_API_KEY set); typed turns are still spoken: npm run kiosk',
      3,
    );
  }

  // The file, then silence: the tail at least, then as long as an utterance or its replies run (up to settleMs).
  const fileFrames = [...pcmFrames(input, INPUT_SAMPLE_RATE, FRAME_MS)];
  const tailFrames = Math.ceil(o.tailMs / FRAME_MS);
  const lastFrame = fileFrames.length + tailFrames + Math.ceil(o.settleMs / FRAME_MS);
  const silence = new Int16Array(FRAME_SAMPLES);
  const answerDue = () => unanswered !== null && performance.now() - unanswered < ANSWER_WAIT_MS;
  function* microphone(): Generator<Int16Array> {
    for (let i = 0; i < lastFrame; i++) {
      if (i >= fileFrames.length + tailFrames && awaiting.size === 0 && !speaking && !answerDue()) return;
      yield fileFrames[i] ?? silence;
    }
  }
  // The microphone's Opus stream: 20 ms packets at 16 kHz, one per binary frame, in order.
  const encoder = opus ? opusCodec().encoder(INPUT_SAMPLE_RATE) : null;
  print(`streaming ${(input.length / INPUT_SAMPLE_RATE).toFixed(1)} s of audio in real time…`);
  await streamAudio(client, microphone(), { frameMs: FRAME_MS, stop: () => failure !== null, ...(encoder ? { encode: (frame: Int16Array) => encoder.encode(frame) } : {}) });
  encoder?.close();
  for (const turnId of [...decoders.keys()]) closeDecoder(turnId);
  if (awaiting.size > 0) print(`(stopped waiting after ${o.settleMs} ms: turn(s) ${[...awaiting].join(', ')} unfinished)`);
  if (client.state === 'ready') await client.end().catch(() => client.close());
  else client.close();

  if (o.out) {
    const samples = concatReplies(replies);
    await writeFile(o.out, writeWav({ sampleRate: outputRate, samples }));
    print(`reply audio: ${(samples.length / outputRate).toFixed(2)} s written to ${o.out}`);
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
