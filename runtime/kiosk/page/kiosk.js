/**
 * The browser kiosk (/kiosk): connects to /v1/kiosk in voice mode and shows captions and state; all of
 * the audio is the kiosk client package's (`BrowserVoice`: the microphone, the speech gate, Opus, the
 * reply's playback and what was heard). Protocol: docs/protocol.md. Nothing is stored: no transcript,
 * no audio, only the token in this tab. `?codec=pcm` in the address keeps the session on PCM both ways,
 * `?gate=off` streams the microphone continuously (tests, debugging).
 */
import { BrowserVoice } from '/kiosk/client/browser.ts';

const $ = (id) => document.getElementById(id);
const params = new URLSearchParams(location.search);
const FORCE_PCM = params.get('codec') === 'pcm';
const SPEECH_GATE = params.get('gate') !== 'off';
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
/** The package's voice: microphone, speech gate, Opus, the reply's playback. Null while disconnected. */
let voice = null;
let connected = false;
let userSpeaking = false;
let pendingReply = null; // turnId awaiting its (spoken) answer, or UTTERANCE before the transcript names it
const UTTERANCE = '';
let pendingTimer = null;
let lastReplyTurn = null;
let typedCount = 0;
const captions = new Map(); // turnId → caption element of Kohami's reply
let interim = null; // the senior's caption while they speak

const open = () => socket && socket.readyState === WebSocket.OPEN;
const send = (frame) => open() && socket.send(JSON.stringify(frame));

/** What the voice sends, on this page's socket (the kiosk client's `KioskClient` has the same methods). */
const link = {
  sendAudio: (payload) => open() && socket.send(payload),
  playbackProgress: (turnId, playedMs) => send({ type: 'playback.progress', turnId, playedMs }),
  playbackDone: (turnId) => send({ type: 'playback.done', turnId }),
  interrupt: (turnId, playedMs) => send({ type: 'interrupt', turnId, playedMs }),
  mute: (muted) => send({ type: 'mic', muted }),
};

function showState() {
  const playing = voice?.player.turnId ?? null;
  let state = 'idle';
  if (socket && !connected) state = 'connecting';
  else if (connected) {
    if (userSpeaking) state = 'user_speaking';
    else if (playing) state = 'speaking';
    else if (pendingReply !== null) state = 'thinking';
    else if (!voice?.listening && !voice?.muted) state = 'typing';
    else state = voice.muted ? 'muted' : 'listening';
  }
  const el = $('state');
  el.dataset.state = state;
  el.textContent = STATE_LABELS[state];
  document.body.dataset.playing = playing || '';
  document.body.dataset.paused = voice?.player.pausedTurn || '';
  $('interrupt').disabled = !connected || (!pendingReply && !playing);
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

/** `[u8 version=1][u8 n][n bytes turnId UTF-8][u32 LE sampleOffset][payload …]` (docs/protocol.md). */
function decodeAudioFrame(buffer) {
  const view = new DataView(buffer);
  if (buffer.byteLength < 6 || view.getUint8(0) !== 1) throw new Error('unknown reply-audio frame');
  const n = view.getUint8(1);
  const turnId = new TextDecoder().decode(new Uint8Array(buffer, 2, n));
  const sampleOffset = view.getUint32(2 + n, true);
  return { turnId, sampleOffset, payload: new Uint8Array(buffer, 6 + n) };
}

function onFrame(frame) {
  voice?.frame(frame);
  switch (frame.type) {
    case 'session.ready': {
      connected = true;
      $('status').textContent = 'connecté';
      $('status').className = 'ok';
      for (const id of ['typed', 'send']) $(id).disabled = false;
      if (frame.mode !== 'voice') {
        notice('Ce serveur ne propose pas la voix : écrivez vos messages.');
      } else if (!frame.audio?.voiceInput) {
        notice('La saisie vocale n’est pas disponible sur ce serveur (clé MISTRAL_API_KEY absente) : écrivez vos messages, Kohami vous répondra à voix haute.');
      } else if (!voice?.microphone) {
        notice('Micro indisponible : écrivez vos messages.');
      } else {
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
      else if (pendingReply === frame.turnId && voice?.player.turnId !== frame.turnId) pendingTimer = setTimeout(() => replyFinished(frame.turnId), AUDIO_WAIT_MS);
      break;
    }
    case 'reply.audio.start':
      clearTimeout(pendingTimer);
      lastReplyTurn = frame.turnId;
      break;
    case 'reply.audio.clear':
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
  // Opened from the click, so that the browser lets it play and record.
  voice = await BrowserVoice.open({
    link,
    codec: FORCE_PCM ? 'pcm' : 'auto',
    speechGate: SPEECH_GATE,
    events: { change: showState, played: replyFinished },
  });
  socket = new WebSocket(`${location.origin.replace(/^http/, 'ws')}/v1/kiosk?token=${encodeURIComponent(token)}`);
  socket.binaryType = 'arraybuffer';
  showState();
  socket.onopen = () => send({ type: 'session.start', mode: 'voice', audio: voice.startAudio() });
  socket.onmessage = (m) => {
    if (typeof m.data === 'string') return onFrame(JSON.parse(m.data));
    voice?.audio(decodeAudioFrame(m.data));
  };
  socket.onclose = (e) => {
    $('status').textContent = e.code === 1006 && !connected ? 'refusé (vérifiez le jeton)' : 'déconnecté';
    $('status').className = 'ko';
    disconnect();
  };
}

function disconnect() {
  clearTimeout(pendingTimer);
  if (socket) {
    socket.onclose = null;
    socket.close();
  }
  socket = null;
  connected = false;
  userSpeaking = false;
  pendingReply = null;
  voice?.close();
  voice = null;
  for (const id of ['typed', 'send', 'mic']) $(id).disabled = true;
  showState();
}

function interrupt() {
  const turnId = voice?.player.turnId || pendingReply || lastReplyTurn;
  if (!turnId) return;
  voice.interrupt(turnId);
  captions.get(turnId)?.classList.add('interrupted');
  showState();
}

function toggleMic() {
  if (!voice) return;
  voice.mute(!voice.muted);
  $('mic').setAttribute('aria-pressed', String(voice.muted));
  $('mic').textContent = voice.muted ? 'Rallumer le micro' : 'Couper le micro';
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

$('token').value = params.get('token') ?? sessionStorage.getItem('kohami-kiosk-token') ?? '';
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
