/**
 * bench:opus — what Opus saves and costs per voice session, each way, against PCM in the same run.
 * Bytes: the WebSocket frames exactly as the runtime sends and takes them (the project's own framing,
 * plus RFC 6455's header: 2 bytes, 2 more over 125 bytes of payload, 4 of mask from the kiosk).
 * CPU: the runtime's own work per second of audio, on this process's clock (process.cpuUsage):
 * microphone — PCM viewed in place vs the packet's pre-check and libopus's decode to 16 kHz; reply —
 * building the PCM frames vs encoding 20 ms packets and framing them, vs relaying the speech service's
 * own Opus (its base64 deltas of Ogg decoded, demuxed, each packet framed) and vs sending a
 * pre-synthesized line's kept packets (framing only). The audio is French speech from
 * espeak-ng, the reply resampled to the kiosk's rate. Then the reply encoder's complexity, 0–10:
 * CPU, bytes and the round trip's SNR (aligned for the codec's delay).
 *   npm run bench:opus   (BENCH_SECONDS=60 of audio per measure, BENCH_REPEATS=5, the median kept)
 */
import { OPUS_COMPLEXITY, opusCodec } from '../adapters/voice/opus-codec.ts';
import { OggOpusDemuxer } from '../machines/voice/ogg-opus.ts';
import { opusPacketInfo } from '../machines/voice/opus-packet.ts';
import { resample } from '../machines/voice/resample.ts';
import { INPUT_SAMPLE_RATE, type OpusCodecPort } from '../machines/voice/voice.port.ts';
import { encodeAudioFrame, encodePacketFrame } from '../runtime/protocol/frame-header.ts';
import { alignedSnrDb } from '../test/support/audio-quality.ts';
import { oggOpusStream } from '../test/support/ogg-opus-writer.ts';
import { chunks, concat, frenchSpeech } from '../test/support/speech.ts';
import { percentile } from './support/stats.ts';
import { docComment, exitOnHelp } from '../runtime/cli/usage.ts';

exitOnHelp(() => docComment(import.meta.url));

const SECONDS = Number(process.env.BENCH_SECONDS ?? 60);
const REPEATS = Number(process.env.BENCH_REPEATS ?? 5);
/** The runtime's reply frames: PCM in 100 ms frames, Opus in 20 ms packets; the microphone in 20 ms frames. */
const PCM_REPLY_FRAME_MS = 100;
const FRAME_MS = 20;
const TURN_ID = 'v12';
const TARGET_RATIO = 8;
const TARGET_CPU_MS = 1;

const wsBytes = (payload: number, fromKiosk: boolean) => payload + 2 + (payload > 125 ? 2 : 0) + (fromKiosk ? 4 : 0);

/** CPU ms (user + system) per second of audio of `run`, which handles `audioSeconds` of it: the median of the repeats. */
function cpuPerSecond(run: () => void, audioSeconds: number): number {
  run(); // warm-up: the JIT and the WASM tiers
  const samples: number[] = [];
  for (let i = 0; i < REPEATS; i++) {
    const before = process.cpuUsage();
    run();
    const used = process.cpuUsage(before);
    samples.push((used.user + used.system) / 1000 / audioSeconds);
  }
  return percentile(samples, 50);
}

const phrases = [
  'Je suis allée au marché ce matin avec ma fille.',
  "Il faisait beau, nous avons acheté des pommes et un peu de fromage.",
  'Ensuite nous avons pris un café sur la place, près de la fontaine.',
  "Mon petit-fils m'a téléphoné hier soir, il viendra dimanche.",
];
const speech16 = concat(await Promise.all(phrases.map((p) => frenchSpeech(p))));
/** `SECONDS` of speech at `rate`, the phrases over and over. */
function speechAt(rate: number): Int16Array {
  const base = rate === INPUT_SAMPLE_RATE ? speech16 : resample(speech16, INPUT_SAMPLE_RATE, rate);
  const total = rate * SECONDS;
  const out = new Int16Array(total);
  for (let at = 0; at < total; at += base.length) out.set(base.subarray(0, Math.min(base.length, total - at)), at);
  return out;
}

interface Row {
  direction: string;
  format: string;
  bytesPerSecond: number;
  cpuMsPerSecond: number;
}
const rows: Row[] = [];

function microphone(codec: OpusCodecPort): void {
  const pcm = speechAt(INPUT_SAMPLE_RATE);
  const frames = chunks(pcm, FRAME_MS);
  const pcmFrames = frames.map((f) => Buffer.from(f.buffer, f.byteOffset, f.byteLength));
  // The kiosk's encoder (in a browser, WebCodecs' AudioEncoder at 24 kbit/s): not the runtime's CPU.
  const kiosk = codec.encoder(INPUT_SAMPLE_RATE);
  const packets = frames.filter((f) => f.length === kiosk.frameSamples).map((f) => kiosk.encode(f));
  kiosk.close();
  let sink = 0;
  const pcmCpu = cpuPerSecond(() => {
    // What the gateway does with a PCM frame: a view of its samples, handed to the listener.
    for (const bytes of pcmFrames) sink += new Int16Array(bytes.buffer, bytes.byteOffset, bytes.length / 2).length;
  }, SECONDS);
  const opusCpu = cpuPerSecond(() => {
    const decoder = codec.decoder();
    for (const packet of packets) {
      if (opusPacketInfo(packet).ok) sink += decoder.decode(packet).length;
    }
    decoder.close();
  }, SECONDS);
  if (sink === 0) throw new Error('nothing decoded');
  rows.push({ direction: 'kiosk → runtime', format: 'pcm_s16le 16 kHz', bytesPerSecond: pcmFrames.reduce((n, f) => n + wsBytes(f.length, true), 0) / SECONDS, cpuMsPerSecond: pcmCpu });
  rows.push({ direction: 'kiosk → runtime', format: 'opus 16 kHz, 24 kbit/s', bytesPerSecond: packets.reduce((n, p) => n + wsBytes(p.length, true), 0) / SECONDS, cpuMsPerSecond: opusCpu });
}

function reply(codec: OpusCodecPort, rate: number): void {
  const pcm = speechAt(rate);
  const pcmFrameSamples = (rate * PCM_REPLY_FRAME_MS) / 1000;
  let bytes = 0;
  const pcmCpu = cpuPerSecond(() => {
    bytes = 0;
    for (let at = 0; at < pcm.length; at += pcmFrameSamples) bytes += wsBytes(encodeAudioFrame(TURN_ID, at, pcm.subarray(at, at + pcmFrameSamples)).length, false);
  }, SECONDS);
  rows.push({ direction: 'runtime → kiosk', format: `pcm_s16le ${rate / 1000} kHz`, bytesPerSecond: bytes / SECONDS, cpuMsPerSecond: pcmCpu });
  const opus = opusReply(codec, pcm, rate);
  rows.push({ direction: 'runtime → kiosk', format: `opus ${rate / 1000} kHz, 24 kbit/s`, bytesPerSecond: opus.bytesPerSecond, cpuMsPerSecond: opus.cpuMsPerSecond });
  const relay = relayedReply(codec, rate);
  rows.push({ direction: 'runtime → kiosk', format: `opus ${rate / 1000} kHz relayed`, bytesPerSecond: relay.relayed.bytesPerSecond, cpuMsPerSecond: relay.relayed.cpuMsPerSecond });
  rows.push({ direction: 'runtime → kiosk', format: `opus ${rate / 1000} kHz line, kept`, bytesPerSecond: relay.line.bytesPerSecond, cpuMsPerSecond: relay.line.cpuMsPerSecond });
  relayRatios.push(`${rate / 1000} kHz: relayed ${(opus.cpuMsPerSecond / relay.relayed.cpuMsPerSecond).toFixed(0)}× less CPU than encoding, a kept line ${(opus.cpuMsPerSecond / relay.line.cpuMsPerSecond).toFixed(0)}× less`);
}
const relayRatios: string[] = [];

/** Ogg bytes per delta of the stand-in speech service (as the fake's): pages straddle deltas. */
const OGG_DELTA_BYTES = 700;

/**
 * The reply as the speech service's own Opus: its packets (encoded here at 24 kHz, standing in for the
 * service's encoder — not the runtime's CPU) in Ogg pages of five, cut into base64 deltas as the SDK
 * hands them over. The runtime's work: each delta's base64 decoded, demuxed (CRC and TOC checked), each
 * packet framed at the kiosk's rate. A kept line's packets: framed only.
 */
function relayedReply(codec: OpusCodecPort, rate: number): { relayed: { bytesPerSecond: number; cpuMsPerSecond: number }; line: { bytesPerSecond: number; cpuMsPerSecond: number } } {
  const service = codec.encoder(24_000);
  const source = speechAt(24_000);
  const packets: Uint8Array[] = [];
  for (let at = 0; at + service.frameSamples <= source.length; at += service.frameSamples) packets.push(service.encode(source.subarray(at, at + service.frameSamples)));
  service.close();
  const ogg = oggOpusStream(packets, { inputSampleRate: 24_000, packetsPerPage: 5 });
  const deltas: string[] = [];
  for (let at = 0; at < ogg.length; at += OGG_DELTA_BYTES) deltas.push(Buffer.from(ogg.subarray(at, at + OGG_DELTA_BYTES)).toString('base64'));
  const perPacket = (rate * FRAME_MS) / 1000;
  let bytes = 0;
  const cpuMsPerSecond = cpuPerSecond(() => {
    bytes = 0;
    let offset = 0;
    const demuxer = new OggOpusDemuxer();
    for (const delta of deltas) {
      for (const { packet, durationMs } of demuxer.push(Buffer.from(delta, 'base64'))) {
        bytes += wsBytes(encodePacketFrame(TURN_ID, offset, packet).length, false);
        offset += (durationMs * rate) / 1000;
      }
    }
    demuxer.end();
  }, SECONDS);
  let lineBytes = 0;
  const lineCpu = cpuPerSecond(() => {
    lineBytes = 0;
    for (let i = 0; i < packets.length; i++) lineBytes += wsBytes(encodePacketFrame(TURN_ID, i * perPacket, packets[i]!).length, false);
  }, SECONDS);
  return { relayed: { bytesPerSecond: bytes / SECONDS, cpuMsPerSecond }, line: { bytesPerSecond: lineBytes / SECONDS, cpuMsPerSecond: lineCpu } };
}

function opusReply(codec: OpusCodecPort, pcm: Int16Array, rate: number): { bytesPerSecond: number; cpuMsPerSecond: number } {
  let bytes = 0;
  const cpuMsPerSecond = cpuPerSecond(() => {
    bytes = 0;
    // One encoder per reply, as the runtime has.
    const encoder = codec.encoder(rate);
    const n = encoder.frameSamples;
    for (let at = 0; at + n <= pcm.length; at += n) bytes += wsBytes(encodePacketFrame(TURN_ID, at, encoder.encode(pcm.subarray(at, at + n))).length, false);
    encoder.close();
  }, SECONDS);
  return { bytesPerSecond: bytes / SECONDS, cpuMsPerSecond };
}

/** The round trip's SNR at `rate` (10 s of speech is plenty). */
function snrOf(codec: OpusCodecPort, rate: number): number {
  const pcm = speechAt(rate).subarray(0, rate * 10);
  const encoder = codec.encoder(rate);
  const decoder = codec.decoder(rate);
  const decoded: Int16Array[] = [];
  for (let at = 0; at + encoder.frameSamples <= pcm.length; at += encoder.frameSamples) decoded.push(decoder.decode(encoder.encode(pcm.subarray(at, at + encoder.frameSamples))));
  encoder.close();
  decoder.close();
  const out = concat(decoded);
  const lag = (rate * 40) / 1000;
  return alignedSnrDb(pcm.subarray(0, out.length - lag), out, lag).snrDb;
}

const codec = opusCodec();
microphone(codec);
for (const rate of [24_000, 48_000]) reply(codec, rate);

const pad = (s: string, n: number) => s.padEnd(n);
console.log(`\nbench:opus — ${SECONDS} s of French speech per measure, median of ${REPEATS}; CPU is this process's, per second of audio\n`);
console.log(`${pad('direction', 17)} ${pad('format', 26)} ${pad('bytes/s', 9)} ${pad('kbit/s', 7)} ${pad('vs PCM', 7)} CPU ms/s`);
let pcmRow: Row | undefined;
for (const row of rows) {
  if (row.format.startsWith('pcm')) pcmRow = row;
  const ratio = pcmRow && row !== pcmRow ? `${(pcmRow.bytesPerSecond / row.bytesPerSecond).toFixed(1)}×` : '1×';
  console.log(`${pad(row.direction, 17)} ${pad(row.format, 26)} ${pad(row.bytesPerSecond.toFixed(0), 9)} ${pad(((row.bytesPerSecond * 8) / 1000).toFixed(1), 7)} ${pad(ratio, 7)} ${row.cpuMsPerSecond.toFixed(3)}`);
}
const verdicts: string[] = [];
for (const row of rows.filter((r) => r.format.startsWith('opus'))) {
  const base = rows.filter((r) => r.direction === row.direction && r.format.startsWith('pcm')).find((r) => r.format.split(' ')[1] === row.format.split(' ')[1])!;
  const ratio = base.bytesPerSecond / row.bytesPerSecond;
  verdicts.push(`${row.direction} ${row.format}: ${ratio.toFixed(1)}× fewer bytes (target ≥ ${TARGET_RATIO}×: ${ratio >= TARGET_RATIO ? 'met' : 'MISSED'}), ${row.cpuMsPerSecond.toFixed(2)} ms CPU/s (target ≤ ${TARGET_CPU_MS}: ${row.cpuMsPerSecond <= TARGET_CPU_MS ? 'met' : 'MISSED'})`);
}
console.log(`\n${verdicts.join('\n')}`);
console.log(`\nagainst encoding the reply, in this run: ${relayRatios.join('; ')}`);

console.log(`\nreply encoder complexity at 24 kHz (the runtime uses ${OPUS_COMPLEXITY})\n`);
console.log(`${pad('complexity', 11)} ${pad('CPU ms/s', 9)} ${pad('kbit/s', 7)} SNR dB`);
const speech24 = speechAt(24_000);
for (const complexity of [0, 1, 3, 5, 8, 10]) {
  const c = opusCodec({ complexity });
  const { bytesPerSecond, cpuMsPerSecond } = opusReply(c, speech24, 24_000);
  console.log(`${pad(String(complexity), 11)} ${pad(cpuMsPerSecond.toFixed(2), 9)} ${pad(((bytesPerSecond * 8) / 1000).toFixed(1), 7)} ${snrOf(c, 24_000).toFixed(1)}`);
}
