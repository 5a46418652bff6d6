/**
 * The browser kiosk (/kiosk): the UI only (captions, state, buttons). The connection is the kiosk
 * client package's `KioskClient` (bounded waits, resume with back-off), all of the audio its
 * `BrowserVoice` (microphone, speech gate, Opus, the reply's playback and what was heard). Protocol:
 * docs/protocol.md. It runs unattended: it connects on load with the stored token and, whatever ends
 * a session, connects again (kiosk-reconnect.js). Everything the senior reads is plain French; what
 * an installer needs (the token, why it is refused) is in the « Réglages » panel. Nothing is stored
 * but the token (this browser's localStorage). `?token=` sets it when none is stored; `?codec=pcm` keeps the session on
 * PCM both ways, `?gate=off` streams the microphone continuously.
 */
import { backoffDelayMs, KioskClient, MAX_TRANSCRIPT_CHARS } from '/kiosk/client/index.ts';
import { attachVoice, BrowserVoice } from '/kiosk/client/browser.ts';
import { CLIENT_RECONNECT, MAX_CAPTIONS, MAX_WAITING_MESSAGES, PAGE_BACKOFF, REPLACED_WAIT_MS, VOICE_SETUP_MS } from '/kiosk/kiosk-reconnect.js';

const $ = (id) => document.getElementById(id);
const params = new URLSearchParams(location.search);
const FORCE_PCM = params.get('codec') === 'pcm';
const SPEECH_GATE = params.get('gate') !== 'off';
const TOKEN_KEY = 'kohami-kiosk-token';
/** A reply whose text is done but whose audio never starts (speech service down) stops « thinking » after this. */
const AUDIO_WAIT_MS = 3000;
const TRANSCRIPT_WAIT_MS = 6000;
/** The token check after a failed connection: a runtime that does not answer it within this is unreachable. */
const TOKEN_CHECK_MS = 5000;

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

/** The runtime's error frames, as the senior reads them (the code itself is never shown). */
const ERROR_SAY = {
  speech_unavailable: 'Le service vocal ne répond pas pour le moment.',
  unsupported_audio_format: 'Le son de la borne n’a pas pu être réglé : écrivez vos messages.',
  audio_not_negotiated: 'Le son de la borne n’a pas pu être réglé : écrivez vos messages.',
  audio_rate_limited: 'Je n’ai pas tout entendu : pouvez-vous répéter ?',
  rate_limited: 'Trop de messages d’un coup : patientez un instant.',
};

/** Everything else the senior reads: plain French, no code, no key name. */
const SAY = {
  problem: 'Un petit souci : pouvez-vous répéter ?',
  noVoice: 'La voix n’est pas disponible pour le moment : écrivez vos messages.',
  noVoiceInput: 'Je ne peux pas entendre votre voix pour le moment : écrivez vos messages, je vous répondrai à voix haute.',
  noMic: 'Le micro ne fonctionne pas : écrivez vos messages.',
  tapForVoice: 'Touchez l’écran pour me parler à voix haute. En attendant, écrivez-moi.',
  reconnecting: 'La connexion est coupée, je la rétablis. Vous pouvez écrire : votre message partira dès son retour.',
  ended: 'La conversation a été terminée. Une nouvelle commence dans un instant.',
  replaced: 'La conversation continue sur un autre appareil.',
  setup: 'La borne doit être réglée par la personne qui l’a installée.',
  waitingFull: 'Des messages attendent déjà le retour de la connexion : réessayez dans un moment.',
  tooLong: 'Ce message est trop long : raccourcissez-le.',
  notSent: 'Votre message n’a pas pu être envoyé : pouvez-vous le réécrire ?',
};

/** The header's word on the connection (its `data-link` is the key). */
const LINK_LABELS = {
  connecting: 'Connexion…',
  connected: 'En ligne',
  reconnecting: 'Connexion perdue, je réessaie…',
  elsewhere: 'Sur un autre appareil',
  setup: 'Borne à régler',
};

/** What the « Réglages » panel tells whoever installs the kiosk. */
const SETUP_LABELS = {
  missing: 'Saisissez le jeton de la borne (il commence par « kiosk_ »).',
  refused: 'Jeton refusé par le serveur (HTTP 401) : il est inconnu ou a été révoqué. Saisissez le jeton de cette borne.',
  erased: 'Les données de la personne liée à ce jeton ont été effacées : la borne ne peut plus ouvrir de conversation. Saisissez un autre jeton.',
  connecting: 'Connexion en cours…',
  connected: 'Connectée.',
};

/** How a turn can fail and still be worth sending again on the next session (once): its session went away. */
const SEND_AGAIN = new Set(['closed', 'reply_lost', 'resume_failed', 'connect_failed', 'connect_timeout', 'ready_timeout', 'closed_before_ready']);

/** The connection (KioskClient) and the package's voice; null between two connections. */
let client = null;
let voice = null;
let connected = false;
/** Connections lost or failed since the last session.ready: the page's back-off step. */
let attempt = 0;
let retryTimer = null;
/**
 * The browser lets no sound play before the senior touches the page (its autoplay policy): the audio
 * setup never finishes. Then the page talks in text until the first tap or click (unblockAudio).
 */
let audioBlocked = false;
/** Typed messages waiting for a session, in order: `{ text, p }` (p: their caption). */
const waiting = [];
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
    else if (!voice || (!voice.listening && !voice.muted)) state = 'typing';
    else state = voice.muted ? 'muted' : 'listening';
  }
  const el = $('state');
  el.dataset.state = state;
  el.textContent = STATE_LABELS[state];
  document.body.dataset.playing = playing || '';
  document.body.dataset.paused = voice?.player.pausedTurn || '';
  $('interrupt').disabled = !connected || (!pendingReply && !playing);
}

/** The header's connection word; `setup` also flags the « Réglages » button and stops typed messages. */
function setLink(link) {
  $('status').dataset.link = link;
  $('status').textContent = LINK_LABELS[link];
  $('open-setup').dataset.alert = String(link === 'setup');
  for (const id of ['typed', 'send']) $(id).disabled = link === 'setup';
}

function setupStatus(kind) {
  $('setup-status').dataset.level = kind;
  $('setup-status').textContent = SETUP_LABELS[kind];
}

/** A problem only the installer can fix: said in the panel, while the senior reads that the kiosk needs them. */
function needsSetup(kind) {
  setLink('setup');
  setupStatus(kind);
  notice(SAY.setup);
}

function caption(className, text) {
  const p = document.createElement('p');
  p.className = className;
  p.textContent = text;
  $('captions').append(p);
  // A kiosk left on for days keeps only the last lines (and forgets the replies it no longer shows).
  while ($('captions').childElementCount > MAX_CAPTIONS) {
    const gone = $('captions').firstElementChild;
    gone.remove();
    for (const [turnId, reply] of captions) if (reply === gone) captions.delete(turnId);
  }
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

function ready(frame) {
  connected = true;
  attempt = 0;
  setLink('connected');
  setupStatus('connected');
  if (audioBlocked) notice(SAY.tapForVoice);
  else if (frame.mode !== 'voice') notice(SAY.noVoice);
  else if (!frame.audio?.voiceInput) notice(SAY.noVoiceInput);
  else if (!voice?.microphone) notice(SAY.noMic);
  else {
    notice('');
    $('mic').disabled = false;
  }
  sendWaiting();
}

function onFrame(frame) {
  switch (frame.type) {
    case 'session.ready':
      ready(frame);
      break;
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
      notice(ERROR_SAY[frame.code] ?? SAY.problem);
      break;
  }
  showState();
}

/**
 * One connection: a new client with the stored token, asking for the session back (a new one starts
 * when it is gone). Whatever ends it comes to `ended`, which starts the next one.
 */
async function start() {
  clearTimeout(retryTimer);
  retryTimer = null;
  stop();
  const token = localStorage.getItem(TOKEN_KEY) ?? '';
  if (!token) {
    needsSetup('missing');
    if (!$('setup').open) $('setup').showModal();
    return;
  }
  const c = new KioskClient({ url: `${location.origin.replace(/^http/, 'ws')}/v1/kiosk`, token, reconnect: CLIENT_RECONNECT });
  client = c;
  // A lost connection stays « perdue » through its attempts; any other start is a plain « Connexion… ».
  if (!['setup', 'reconnecting'].includes($('status').dataset.link)) setLink('connecting');
  c.on('client.closed', (event) => client === c && ended(token, event));
  showState();
  const v = await openVoice(c);
  if (client !== c) return v?.close();
  voice = v;
  if (v) attachVoice(c, v);
  for (const type of SHOWN) c.on(type, onFrame);
  c.on('client.state', (state) => {
    if (client !== c) return;
    // A lost connection is resumed by the client first: the page says so and waits.
    connected = state === 'ready';
    if (state === 'reconnecting') {
      setLink('reconnecting');
      notice(SAY.reconnecting);
    }
    showState();
  });
  // A failed connect ends the client (`client.closed`), where the next attempt is decided.
  await c.connect(v ? { mode: 'voice', audio: v.startAudio(), resume: true } : { resume: true }).catch(() => undefined);
}

/**
 * The voice for client `c`, or null: no audio at all (the session goes on in text), or a browser that
 * holds the audio back until a gesture. Its setup waits at most VOICE_SETUP_MS, so the page connects
 * in text rather than stay « Connexion… ».
 */
async function openVoice(c) {
  if (audioBlocked) return null;
  setAudio('opening');
  const opening = BrowserVoice.open({ link: c, codec: FORCE_PCM ? 'pcm' : 'auto', speechGate: SPEECH_GATE, events: { change: showState, played: replyFinished } });
  let bound;
  const outOfTime = new Promise((resolve) => (bound = setTimeout(resolve, VOICE_SETUP_MS, 'blocked')));
  const v = await Promise.race([opening, outOfTime]).catch((err) => {
    console.warn('audio unavailable', err);
    return null;
  });
  clearTimeout(bound);
  if (v !== 'blocked') {
    setAudio(v ? 'on' : 'off');
    return v;
  }
  audioBlocked = true;
  setAudio('blocked');
  // Set up at last (a gesture, or a slow machine): the audio can play now; this voice belongs to a finished attempt.
  opening.then((late) => (late.close(), unblockAudio()), () => undefined);
  return null;
}

/** The first tap or click lets the browser play: the conversation goes on with voice (the same session, asked back). */
function unblockAudio() {
  if (!audioBlocked) return;
  audioBlocked = false;
  setAudio('off');
  if (!client) return;
  attempt = 0;
  void start();
}

/** `body[data-audio]`: opening, on, off (none: text only) or blocked (waiting for a tap). */
function setAudio(state) {
  document.body.dataset.audio = state;
}

/** The session or the client is over: say so in plain words, and connect again after the back-off. */
async function ended(token, { reason, error }) {
  stop();
  if (reason === 'erased') return needsSetup('erased');
  let waitMs;
  // Only a lost or refused connection is said to be lost: the header is quiet otherwise.
  let link = 'connecting';
  if (reason === 'replaced') {
    notice(SAY.replaced);
    link = 'elsewhere';
    waitMs = REPLACED_WAIT_MS;
  } else {
    // `pause` (nobody spoke for a long while): a new conversation, quietly.
    if (reason === 'ended' || reason === 'operator') notice(SAY.ended);
    else if (reason !== 'pause') {
      notice(SAY.reconnecting);
      link = 'reconnecting';
    }
    attempt += 1;
    waitMs = backoffDelayMs(attempt, PAGE_BACKOFF, Math.random);
  }
  if ($('status').dataset.link !== 'setup') setLink(link);
  // A browser cannot see why an upgrade failed: the runtime says whether it knows the token.
  if (error && (await tokenRefused(token))) needsSetup('refused');
  // Someone saved a token (or the attempt already restarted) meanwhile.
  if (client || retryTimer || localStorage.getItem(TOKEN_KEY) !== token) return;
  retryTimer = setTimeout(start, waitMs);
}

/** True when the runtime answers that it does not know `token` (401); false when it knows it or cannot be reached. */
async function tokenRefused(token) {
  try {
    const res = await fetch('/kiosk/token-check', { headers: { authorization: `Bearer ${token}` }, cache: 'no-store', signal: AbortSignal.timeout(TOKEN_CHECK_MS) });
    return res.status === 401;
  } catch {
    return false;
  }
}

/** Lets the current client and voice go (pending turns fail with `closed`, and wait for the next session). */
function stop() {
  clearTimeout(pendingTimer);
  const c = client;
  client = null;
  c?.close();
  connected = false;
  userSpeaking = false;
  pendingReply = null;
  interim = null;
  voice?.close();
  voice = null;
  $('mic').disabled = true;
  $('mic').setAttribute('aria-pressed', 'false');
  $('mic').textContent = 'Couper le micro';
  showState();
}

function interrupt() {
  const turnId = voice?.player.turnId || pendingReply || lastReplyTurn;
  if (!turnId || !voice) return;
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
  if (!text) return;
  if (text.length > MAX_TRANSCRIPT_CHARS) return notice(SAY.tooLong);
  if (!connected && waiting.length >= MAX_WAITING_MESSAGES) return notice(SAY.waitingFull);
  $('typed').value = '';
  const p = caption('you', text);
  if (connected) return sendTurn(text, p, false);
  // Offline: shown now, sent as soon as a session is ready.
  p.classList.add('pending');
  waiting.push({ text, p });
}

function sendWaiting() {
  while (connected && waiting.length) {
    const { text, p } = waiting.shift();
    p.classList.remove('pending');
    sendTurn(text, p, true);
  }
}

/** Sends a typed turn. One whose session went away before its reply waits for the next (once; after that the senior is told). */
function sendTurn(text, p, again) {
  let turn;
  try {
    // The client names the turn (unique across reconnections) and answers it with its reply.done.
    turn = client.turn(text);
  } catch {
    // Too many turns already waiting for their reply.
    return notice(SAY.notSent);
  }
  const { turnId, reply } = turn;
  awaitReply(turnId);
  reply.catch((err) => {
    if (!again && SEND_AGAIN.has(err.code) && waiting.length < MAX_WAITING_MESSAGES) {
      p.classList.add('pending');
      waiting.push({ text, p });
      return sendWaiting();
    }
    // A refused turn (too many at once, the runtime's own refusal): said plainly, not retried.
    notice(SAY.notSent);
  });
}

function openSetup() {
  $('token').value = localStorage.getItem(TOKEN_KEY) ?? '';
  $('setup').showModal();
}

function saveToken(e) {
  e.preventDefault();
  const token = $('token').value.trim();
  if (!token) return setupStatus('missing');
  localStorage.setItem(TOKEN_KEY, token);
  setupStatus('connecting');
  setLink('connecting');
  notice('');
  attempt = 0;
  void start();
}

// A token in the address (the banner's link) leaves the address bar and the history at once; the other settings stay
// for a reload. It is stored only when none is: a browser restarted on that address keeps a token saved in « Réglages ».
if (params.has('token')) {
  if (!localStorage.getItem(TOKEN_KEY)) localStorage.setItem(TOKEN_KEY, params.get('token').trim());
  params.delete('token');
  history.replaceState(null, '', `${location.pathname}${params.size ? `?${params}` : ''}`);
}
$('open-setup').onclick = openSetup;
$('close-setup').onclick = () => $('setup').close();
$('setup-form').onsubmit = saveToken;
$('interrupt').onclick = interrupt;
$('mic').onclick = toggleMic;
$('say').onsubmit = say;
// Before the click's own handler (« Envoyer » puts the message in line for the new connection).
addEventListener('pointerdown', unblockAudio, { capture: true });
void start();
