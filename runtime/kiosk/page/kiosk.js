/**
 * The browser kiosk (/kiosk): the UI only (captions, state, buttons). The connection is the kiosk
 * client package's `KioskClient` (bounded waits, resume with back-off), all of the audio its
 * `BrowserVoice` (microphone, speech gate, Opus, the reply's playback and what was heard). Protocol:
 * docs/protocol.md. Nothing is stored: no transcript, no audio, only the token in this tab. `?codec=pcm`
 * in the address keeps the session on PCM both ways, `?gate=off` streams the microphone continuously.
 */
import { KioskClient } from '/kiosk/client/index.ts';
import { attachVoice, BrowserVoice } from '/kiosk/client/browser.ts';

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

/** The connection (KioskClient) and the package's voice; null while disconnected. */
let client = null;
let voice = null;
let connected = false;
let userSpeaking = false;
let pendingReply = null; // turnId awaiting its (spoken) answer, or UTTERANCE before the transcript names it
const UTTERANCE = '';
let pendingTimer = null;
let lastReplyTurn = null;
const captions = new Map(); // turnId → caption element of Kohami's reply
let interim = null; // the senior's caption while they speak

/** The server frames the page shows (the voice handles the reply's audio itself). */
const SHOWN = ['session.ready', 'vad', 'transcript.delta', 'transcript.final', 'reply.delta', 'reply.done', 'reply.audio.start', 'reply.audio.clear', 'error', 'session.closed'];

function showState() {
  const playing = voice?.player.turnId ?? null;
  let state = 'idle';
  if (client && !connected) state = 'connecting';
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

function onFrame(frame) {
  switch (frame.type) {
    case 'session.ready': {
      connected = true;
      setStatus('connecté', 'ok');
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
  const c = new KioskClient({ url: `${location.origin.replace(/^http/, 'ws')}/v1/kiosk`, token });
  client = c;
  // Opened from the click, so that the browser lets it play and record.
  const v = await BrowserVoice.open({ link: c, codec: FORCE_PCM ? 'pcm' : 'auto', speechGate: SPEECH_GATE, events: { change: showState, played: replyFinished } });
  if (client !== c) return v.close();
  voice = v;
  attachVoice(c, v);
  for (const type of SHOWN) c.on(type, onFrame);
  c.on('client.state', (state) => {
    // A lost connection is resumed by the client: the page says so and waits.
    connected = state === 'ready';
    if (state === 'reconnecting') setStatus('reconnexion…', 'ko');
    showState();
  });
  c.on('client.closed', ({ reason }) => {
    if (client !== c) return;
    setStatus(reason === 'client' ? 'déconnecté' : `déconnecté (${reason})`, 'ko');
    disconnect();
  });
  showState();
  try {
    await c.connect({ mode: 'voice', audio: v.startAudio() });
  } catch (err) {
    if (client !== c) return;
    // A browser cannot see the HTTP status of a refused upgrade: a token refused looks like a failed connection.
    setStatus(err.code === 'connect_failed' || err.code === 'refused' ? 'refusé (vérifiez le jeton)' : `échec (${err.code})`, 'ko');
    disconnect();
  }
}

function setStatus(text, className) {
  $('status').textContent = text;
  $('status').className = className;
}

function disconnect() {
  clearTimeout(pendingTimer);
  const c = client;
  client = null;
  c?.close();
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
  // The client names the turn (unique across reconnections) and answers it with its reply.done.
  const { turnId, reply } = client.turn(text);
  // A refused turn's error frame is shown as it comes; a closed client fails its turns, which is no news.
  reply.catch(() => undefined);
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
