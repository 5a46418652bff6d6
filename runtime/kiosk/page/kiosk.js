/**
 * The browser kiosk (/kiosk): connects to /v1/kiosk in voice mode, streams the microphone as 20 ms
 * binary frames (Opus packets where WebCodecs encodes Opus, else 16 kHz s16le), plays the spoken replies
 * (Opus decoded here when WebCodecs can, else PCM) and reports what was heard, shows captions.
 * Protocol: docs/protocol.md. Nothing is stored: no transcript, no audio, only the token in this tab.
 * `?codec=pcm` in the address keeps the session on PCM both ways (tests, debugging).
 */
import { MicOpusEncoder, OPUS_RATE, opusSupport, ReplyOpusDecoder } from './opus-stream.js';
import { ReplyPlayer } from './reply-player.js';

const $ = (id) => document.getElementById(id);
const PROGRESS_EVERY_MS = 250;
/** Reply rates this page plays, best first (the browser resamples to the speaker). */
const OUTPUT_RATES = [24000, 16000, 48000];
/** The PCM the runtime hears from a kiosk that does not send Opus. */
const PCM_INPUT_RATE = 16000;
const FORCE_PCM = new URLSearchParams(location.search).get('codec') === 'pcm';
/** A reply whose text is done but whose audio never starts (speech service down) stops « thinking » after this. */
const AUDIO_WAIT_MS = 3000;
const TRANSCRIPT_WAIT_MS = 6000;

const STATE_LABELS = {
  idle: 'Hors ligne',
  connecting: 'Connexion…',
  listening: 'Je vous écoute',
  muted: 'Micro coupé',
  typing: 'Écrivez-moi',
  user_speaking: 'Vous parlez…',
  thinking: 'Je réfléchis…',
  speaking: 'Je parle…',
};

const ERROR_LABELS = {
  speech_unavailable: 'Le service vocal ne répond pas pour le moment.',
  unsupported_audio_format: 'Format audio refusé par le serveur.',
  audio_not_negotiated: 'Audio envoyé avant la négociation.',
  audio_rate_limited: 'Trop de son envoyé : une partie a été ignorée.',
  rate_limited: 'Trop de messages : réessayez.',
};

let socket = null;
let player = null;
let playbackCtx = null;
let mic = null; // { ctx, stream, node, aec, encoder (Opus input) or null }
/** The negotiated reply encoding (session.ready), and the current Opus turn's decoder: { turnId, decoder }. */
let outputEncoding = 'pcm_s16le';
let replyDecoder = null;
let micSending = false;
let muted = false;
let connected = false;
let userSpeaking = false;
let pendingReply = null; // turnId awaiting its (spoken) answer, or UTTERANCE before the transcript names it
const UTTERANCE = '';
let pendingTimer = null;
let lastReplyTurn = null;
let typedCount = 0;
let progressTimer = null;
const captions = new Map(); // turnId → caption element of Kohami's reply
let interim = null; // the senior's caption while they speak

const send = (frame) => socket && socket.readyState === WebSocket.OPEN && socket.send(JSON.stringify(frame));

function showState() {
  let state = 'idle';
  if (socket && !connected) state = 'connecting';
  else if (connected) {
    if (userSpeaking) state = 'user_speaking';
    else if (player && player.turnId) state = 'speaking';
    else if (pendingReply !== null) state = 'thinking';
    else if (!micSending) state = 'typing';
    else state = muted ? 'muted' : 'listening';
  }
  const el = $('state');
  el.dataset.state = state;
  el.textContent = STATE_LABELS[state];
  document.body.dataset.playing = (player && player.turnId) || '';
  document.body.dataset.paused = (player && player.pausedTurn) || '';
  $('interrupt').disabled = !connected || (!pendingReply && !(player && player.turnId));
}

function caption(className, text) {
  const p = document.createElement('p');
  p.className = className;
  p.textContent = text;
  $('captions').append(p);
  $('captions').scrollTop = $('captions').scrollHeight;
  return p;
}

function notice(text) {
  $('notice').textContent = text;
}

function awaitReply(turnId) {
  pendingReply = turnId;
  clearTimeout(pendingTimer);
  // Speech that yields no transcript (nothing understood) must not leave the page « thinking ».
  if (turnId === UTTERANCE) pendingTimer = setTimeout(() => replyFinished(UTTERANCE), TRANSCRIPT_WAIT_MS);
  showState();
}

function replyFinished(turnId) {
  if (pendingReply !== turnId && pendingReply !== UTTERANCE) return;
  pendingReply = null;
  clearTimeout(pendingTimer);
  showState();
}

/** `[u8 version=1][u8 n][n bytes turnId UTF-8][u32 LE sampleOffset][payload …]` (runtime/protocol/frame-header.ts). */
function decodeAudioFrame(buffer) {
  const view = new DataView(buffer);
  if (buffer.byteLength < 6 || view.getUint8(0) !== 1) throw new Error('unknown reply-audio frame');
  const n = view.getUint8(1);
  const turnId = new TextDecoder().decode(new Uint8Array(buffer, 2, n));
  const sampleOffset = view.getUint32(2 + n, true);
  return { turnId, sampleOffset, payload: new Uint8Array(buffer, 6 + n) };
}

/** A PCM s16le payload as the Float32 the player schedules. */
function pcmSamples(payload) {
  const view = new DataView(payload.buffer, payload.byteOffset, payload.byteLength);
  const pcm = new Float32Array(payload.byteLength >> 1);
  for (let i = 0; i < pcm.length; i++) pcm[i] = view.getInt16(2 * i, true) / 0x8000;
  return pcm;
}

function onAudioFrame(buffer) {
  const { turnId, sampleOffset, payload } = decodeAudioFrame(buffer);
  if (outputEncoding !== 'opus') return player.push(turnId, sampleOffset, pcmSamples(payload));
  // A cleared or finished turn's packets have no decoder any more: dropped.
  if (replyDecoder && replyDecoder.turnId === turnId) replyDecoder.decoder.decode(sampleOffset, payload);
}

/** reply.audio.start with Opus: a fresh decoder for the turn (each turn is its own Opus stream). */
function openReplyDecoder(turnId, sampleRate) {
  closeReplyDecoder();
  replyDecoder = { turnId, decoder: new ReplyOpusDecoder(sampleRate, (sampleOffset, pcm) => player?.push(turnId, sampleOffset, pcm)) };
}

function closeReplyDecoder(turnId) {
  if (!replyDecoder || (turnId !== undefined && replyDecoder.turnId !== turnId)) return;
  replyDecoder.decoder.close();
  replyDecoder = null;
}

/** reply.audio.end: the turn ends for the player once its last packets are decoded and scheduled. */
function endReplyAudio(turnId) {
  if (!replyDecoder || replyDecoder.turnId !== turnId) return player.end(turnId);
  const { decoder } = replyDecoder;
  replyDecoder = null;
  void decoder.drain().then(() => player?.end(turnId));
}

/**
 * Opens the microphone before the session starts, so that session.start can say whether echo is
 * cancelled; `rate` is what it is captured at (48 kHz for Opus input, else 16 kHz PCM).
 */
async function openMicrophone(rate) {
  const stream = await navigator.mediaDevices.getUserMedia({
    audio: { channelCount: 1, echoCancellation: true, noiseSuppression: true, autoGainControl: true },
  });
  let ctx;
  let source;
  try {
    ctx = new AudioContext({ sampleRate: rate });
    source = ctx.createMediaStreamSource(stream);
  } catch {
    // Some browsers refuse a microphone in a context at another rate: the worklet resamples instead.
    await ctx?.close();
    ctx = new AudioContext();
    source = ctx.createMediaStreamSource(stream);
  }
  await ctx.audioWorklet.addModule('/kiosk/audio-worklet.js');
  const node = new AudioWorkletNode(ctx, 'mic-capture', {
    numberOfInputs: 1, numberOfOutputs: 0, channelCount: 1, channelCountMode: 'explicit', processorOptions: { rate },
  });
  const sending = () => micSending && !muted && socket && socket.readyState === WebSocket.OPEN;
  const encoder = rate === OPUS_RATE ? new MicOpusEncoder((packet) => sending() && socket.send(packet)) : null;
  node.port.onmessage = (e) => {
    if (!sending()) return;
    if (encoder) encoder.encode(new Int16Array(e.data));
    else socket.send(e.data);
  };
  source.connect(node);
  const aec = stream.getAudioTracks()[0]?.getSettings().echoCancellation === true;
  return { ctx, stream, node, aec, encoder };
}

function closeMicrophone() {
  if (!mic) return;
  mic.node.port.onmessage = null;
  mic.encoder?.close();
  mic.stream.getTracks().forEach((t) => t.stop());
  mic.ctx.close();
  mic = null;
}

function onFrame(frame) {
  switch (frame.type) {
    case 'session.ready': {
      connected = true;
      outputEncoding = frame.audio?.output?.encoding ?? 'pcm_s16le';
      $('status').textContent = 'connecté';
      $('status').className = 'ok';
      for (const id of ['typed', 'send']) $(id).disabled = false;
      if (frame.mode !== 'voice') {
        notice('Ce serveur ne propose pas la voix : écrivez vos messages.');
      } else if (!frame.audio?.voiceInput) {
        notice('La saisie vocale n’est pas disponible sur ce serveur (clé MISTRAL_API_KEY absente) : écrivez vos messages, Kohami vous répondra à voix haute.');
      } else if (!mic) {
        notice('Micro indisponible : écrivez vos messages.');
      } else {
        micSending = true;
        $('mic').disabled = false;
      }
      break;
    }
    case 'vad':
      userSpeaking = frame.state === 'speech_started';
      if (userSpeaking && !interim) interim = caption('you interim', '…');
      // The transcript is on its way: its turnId comes with it.
      if (!userSpeaking && pendingReply === null) awaitReply(UTTERANCE);
      break;
    case 'transcript.delta':
      // The whole interim transcript so far: it replaces what is shown.
      if (!interim) interim = caption('you interim', '');
      interim.textContent = frame.text;
      break;
    case 'transcript.final':
      if (!interim) interim = caption('you', '');
      interim.className = 'you';
      interim.textContent = frame.text;
      interim = null;
      awaitReply(frame.turnId);
      break;
    case 'reply.delta': {
      let p = captions.get(frame.turnId);
      if (!p) captions.set(frame.turnId, (p = caption('kohami', '')));
      p.textContent += frame.text;
      lastReplyTurn = frame.turnId;
      break;
    }
    case 'reply.done': {
      let p = captions.get(frame.turnId);
      if (!p) captions.set(frame.turnId, (p = caption('kohami', '')));
      p.textContent = frame.text;
      if (frame.interrupted) p.classList.add('interrupted');
      lastReplyTurn = frame.turnId;
      // Voice replies end when their audio has played; one that never gets audio must not stay « thinking ».
      if (frame.interrupted) replyFinished(frame.turnId);
      else if (pendingReply === frame.turnId && player.turnId !== frame.turnId) pendingTimer = setTimeout(() => replyFinished(frame.turnId), AUDIO_WAIT_MS);
      break;
    }
    case 'reply.audio.start':
      clearTimeout(pendingTimer);
      player.begin(frame.turnId, frame.sampleRate);
      if (frame.encoding === 'opus') openReplyDecoder(frame.turnId, frame.sampleRate);
      else closeReplyDecoder();
      lastReplyTurn = frame.turnId;
      break;
    case 'reply.audio.end':
      endReplyAudio(frame.turnId);
      break;
    case 'reply.audio.pause':
      // Speech with no word over the reply (a cough, the television): quiet now, to resume where it stopped.
      player.pause(frame.turnId);
      break;
    case 'reply.audio.resume':
      player.resume(frame.turnId);
      break;
    case 'reply.audio.clear':
      closeReplyDecoder(frame.turnId);
      player.clear(frame.turnId);
      captions.get(frame.turnId)?.classList.add('interrupted');
      replyFinished(frame.turnId);
      break;
    case 'error':
      notice(`${ERROR_LABELS[frame.code] ?? 'Erreur'} (${frame.code})`);
      break;
    case 'session.closed':
      notice(`Session terminée (${frame.reason}).`);
      break;
  }
  showState();
}

async function connect() {
  const token = $('token').value.trim();
  disconnect();
  notice('');
  sessionStorage.setItem('kohami-kiosk-token', token);
  // Created from the click, so that the browser lets them play and record.
  playbackCtx = new AudioContext();
  await playbackCtx.resume();
  player = new ReplyPlayer(playbackCtx, {
    onDone: (turnId) => {
      send({ type: 'playback.done', turnId });
      replyFinished(turnId);
    },
    onChange: showState,
  });
  const opus = FORCE_PCM ? { input: false, output: false } : await opusSupport();
  try {
    mic = await openMicrophone(opus.input ? OPUS_RATE : PCM_INPUT_RATE);
  } catch (err) {
    mic = null;
    console.warn('microphone unavailable', err);
  }
  socket = new WebSocket(`${location.origin.replace(/^http/, 'ws')}/v1/kiosk?token=${encodeURIComponent(token)}`);
  socket.binaryType = 'arraybuffer';
  showState();
  socket.onopen = () =>
    send({
      type: 'session.start',
      mode: 'voice',
      audio: {
        input: mic?.encoder ? { encoding: 'opus', sampleRate: OPUS_RATE } : { encoding: 'pcm_s16le', sampleRate: PCM_INPUT_RATE },
        // Opus first where this browser decodes it; PCM after it is the fallback a runtime without Opus picks.
        output: {
          accept: [
            ...(opus.output ? [{ encoding: 'opus', sampleRate: OPUS_RATE }] : []),
            ...OUTPUT_RATES.map((sampleRate) => ({ encoding: 'pcm_s16le', sampleRate })),
          ],
        },
        kiosk: { aec: mic ? mic.aec : false },
      },
    });
  socket.onmessage = (m) => {
    if (typeof m.data === 'string') return onFrame(JSON.parse(m.data));
    onAudioFrame(m.data);
  };
  socket.onclose = (e) => {
    $('status').textContent = e.code === 1006 && !connected ? 'refusé (vérifiez le jeton)' : 'déconnecté';
    $('status').className = 'ko';
    disconnect();
  };
  progressTimer = setInterval(() => {
    if (!player || !player.turnId) return;
    send({ type: 'playback.progress', turnId: player.turnId, playedMs: player.playedMs() });
    player.checkDone();
  }, PROGRESS_EVERY_MS);
}

function disconnect() {
  clearInterval(progressTimer);
  clearTimeout(pendingTimer);
  if (socket) {
    socket.onclose = null;
    socket.close();
  }
  socket = null;
  connected = false;
  micSending = false;
  userSpeaking = false;
  pendingReply = null;
  closeReplyDecoder();
  outputEncoding = 'pcm_s16le';
  if (player && player.turnId) player.stop();
  playbackCtx?.close();
  playbackCtx = null;
  closeMicrophone();
  for (const id of ['typed', 'send', 'mic']) $(id).disabled = true;
  showState();
}

function interrupt() {
  const turnId = player.turnId || pendingReply || lastReplyTurn;
  if (!turnId) return;
  const playedMs = player.turnId === turnId ? player.playedMs() : 0;
  send({ type: 'interrupt', turnId, playedMs });
  closeReplyDecoder(turnId);
  player.clear(turnId);
  captions.get(turnId)?.classList.add('interrupted');
  showState();
}

function toggleMic() {
  muted = !muted;
  send({ type: 'mic', muted });
  $('mic').setAttribute('aria-pressed', String(muted));
  $('mic').textContent = muted ? 'Rallumer le micro' : 'Couper le micro';
  showState();
}

function say(e) {
  e.preventDefault();
  const text = $('typed').value.trim();
  if (!text || !connected) return;
  typedCount += 1;
  // Unique across reconnections: the runtime refuses a turnId a session has already seen.
  const turnId = `k${Date.now().toString(36)}-${typedCount}`;
  send({ type: 'turn', turnId, transcript: text });
  caption('you', text);
  $('typed').value = '';
  awaitReply(turnId);
}

$('token').value = new URLSearchParams(location.search).get('token') ?? sessionStorage.getItem('kohami-kiosk-token') ?? '';
// The token leaves the address bar and the history at once: it stays in this tab's sessionStorage only.
if (location.search) {
  sessionStorage.setItem('kohami-kiosk-token', $('token').value);
  history.replaceState(null, '', location.pathname);
}
$('connect').onclick = connect;
$('interrupt').onclick = interrupt;
$('mic').onclick = toggleMic;
$('say').onsubmit = say;
showState();
