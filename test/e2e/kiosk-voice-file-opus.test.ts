import { execFile } from 'node:child_process';
import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { DEFAULT_SETTLE_MS, DEFAULT_TAIL_MS, runVoiceFile } from '../../runtime/cli/voice-file-kiosk.ts';
import { readWav, writeWav } from '@kohami/kiosk-client/node';
import { alignedSnrDb } from '../support/audio-quality.ts';
import type { FakeMistral } from '../support/fake-mistral.ts';
import { FAKE_SPEECH_SAMPLE_RATE, fakeSpeechDurationMs, fakeSpeechPcm, type FakeVoxtral } from '../support/fake-voxtral.ts';
import { KIOSK_TOKEN, type TestRuntime } from '../support/runtime.ts';
import { concat, frenchSpeech, silence } from '../support/speech.ts';
import { startVoiceRuntime } from '../support/voice-runtime.ts';

/**
 * `npm run kiosk -- --voice FILE.wav --codec opus`: the WAV goes to the real runtime as Opus packets
 * (the server's own codec adapter encodes them), the reply comes back as Opus and is decoded into --out.
 */
const run = promisify(execFile);
const ASKED = 'Je suis allée au marché ce matin avec ma fille';
const REPLY = ['Quelle bonne idée que ce marché, ', 'le matin on y est bien.'];
/** Opus is lossy: the decoded reply is compared with the fake's tone, aligned for the codec's delay. */
const MIN_SNR_DB = 8;
const REAL_TIME_TEST_MS = 60_000;
/** How late the recognizer answers a flush in the slow-answer case: past the file kiosk's whole tail. */
const LATE_FLUSH_MS = DEFAULT_TAIL_MS + 1000;

let voxtral: FakeVoxtral;
let mistral: FakeMistral;
let rt: TestRuntime;
let stop: (() => Promise<void>) | undefined;
let dir: string;
let question: string;

beforeAll(async () => {
  // A recognizer slower than the file kiosk's tail is still within this runtime's speech budget (and its
  // flush-answer bound, below half of it): the late final is a transcript, not the SOS line.
  ({ rt, voxtral, mistral, stop } = await startVoiceRuntime('cli-opus', { STT_BUDGET_MS: String(4 * LATE_FLUSH_MS), STT_FLUSH_ANSWER_MS: String(1.5 * LATE_FLUSH_MS) }));
  dir = await mkdtemp(path.join(tmpdir(), 'kohami-cli-opus-'));
  question = path.join(dir, 'question.wav');
  const speech = concat([silence(200), await frenchSpeech(`${ASKED}.`)]);
  await writeFile(question, writeWav({ sampleRate: 16_000, samples: speech }));
}, REAL_TIME_TEST_MS);

afterAll(async () => {
  await stop?.();
  if (dir) await rm(dir, { recursive: true, force: true });
});

describe('npm run kiosk -- --voice FILE.wav --codec opus', () => {
  it('streams the WAV as Opus, is transcribed from 16 kHz PCM, and writes the decoded Opus reply to --out', async () => {
    voxtral.utterances.push({ text: ASKED });
    mistral.mode = { kind: 'stream', chunks: REPLY };
    const out = path.join(dir, 'reply.wav');
    const firstSocket = voxtral.sockets.length;
    let printed = '';
    await runVoiceFile({ url: rt.wsUrl, token: KIOSK_TOKEN, wav: question, out, codec: 'opus', tailMs: DEFAULT_TAIL_MS, settleMs: DEFAULT_SETTLE_MS, write: (t) => (printed += t) });

    // Opus negotiated both ways, and no packet refused.
    expect(printed).toMatch(/voice, microphone opus 16000 Hz, reply audio opus 24000 Hz/);
    expect(printed).not.toContain('[error');
    expect(printed).toContain(`vous> ${ASKED}`);
    expect(printed).toContain(`kohami> ${REPLY.join('')}`);
    // The recognizer heard the runtime's decoding of the packets: over a second of 16 kHz s16le (32 bytes a ms).
    expect(voxtral.sockets.slice(firstSocket).reduce((n, s) => n + s.audioBytes, 0) / 32).toBeGreaterThan(1000);

    // The reply WAV is the fake's tone through the codec, at the negotiated 24 kHz.
    const reply = readWav(new Uint8Array(await readFile(out)), FAKE_SPEECH_SAMPLE_RATE).samples;
    // Spoken in two pieces, cut at the comma (as voice-opus.test.ts's marks show).
    const spoken = concat(['Quelle bonne idée que ce marché,', 'le matin on y est bien.'].map((p) => Int16Array.from(fakeSpeechPcm(p, 'tone'), (x) => Math.round(x * 32767))));
    expect(reply.length).toBeGreaterThanOrEqual(spoken.length);
    const lag = (FAKE_SPEECH_SAMPLE_RATE * 40) / 1000;
    expect(alignedSnrDb(spoken.subarray(0, spoken.length - lag), reply, lag).snrDb).toBeGreaterThan(MIN_SNR_DB);
  }, REAL_TIME_TEST_MS);

  it('waits past its tail for what follows an utterance the runtime has ended: a slow recognizer and a slow voice lose no turn and no audio', async () => {
    // The runtime ends the utterance soon after the speech; the final transcript comes with the flush's
    // answer, LATE_FLUSH_MS later: after the tail has run out. The reply's text is then whole at once, and
    // its audio begins SPEECH_LATENCY_MS after it.
    const SPEECH_LATENCY_MS = 1000;
    voxtral.behaviours.add('late-flush');
    voxtral.lateFlushMs = LATE_FLUSH_MS;
    voxtral.speechLatencyMs = SPEECH_LATENCY_MS;
    try {
      voxtral.utterances.push({ text: ASKED });
      mistral.mode = { kind: 'stream', chunks: REPLY };
      const out = path.join(dir, 'late-reply.wav');
      let printed = '';
      await runVoiceFile({ url: rt.wsUrl, token: KIOSK_TOKEN, wav: question, out, tailMs: DEFAULT_TAIL_MS, settleMs: DEFAULT_SETTLE_MS, write: (t) => (printed += t) });
      expect(printed).toContain('[vad speech_stopped]');
      expect(printed).toContain(`vous> ${ASKED}`);
      expect(printed).toContain(`kohami> ${REPLY.join('')}`);
      expect(printed).not.toContain('[error');
      expect(printed).not.toContain('stopped waiting');
      // The whole reply, both pieces of it, in the WAV.
      const spokenMs = fakeSpeechDurationMs('Quelle bonne idée que ce marché,') + fakeSpeechDurationMs('le matin on y est bien.');
      expect((readWav(new Uint8Array(await readFile(out)), FAKE_SPEECH_SAMPLE_RATE).samples.length * 1000) / FAKE_SPEECH_SAMPLE_RATE).toBeGreaterThanOrEqual(spokenMs);
    } finally {
      voxtral.behaviours.delete('late-flush');
      voxtral.speechLatencyMs = 0;
    }
  }, REAL_TIME_TEST_MS);

  it('refuses a codec it does not know', async () => {
    const failed = await run(process.execPath, ['runtime/cli/kiosk.ts', '--token', KIOSK_TOKEN, '--voice', question, '--codec', 'mp3'], { cwd: process.cwd() }).then(
      () => undefined,
      (e: { code: number; stderr: string }) => e,
    );
    expect(failed?.code).toBe(2);
    expect(failed?.stderr).toContain('--codec takes pcm or opus, not mp3');
  }, REAL_TIME_TEST_MS);
});
