/**
 * How the /kiosk page stays connected unattended (docs/voice.md, « The browser kiosk »): plain data,
 * served to the page as it is and read by its tests for their bounds.
 *
 * Two layers. The kiosk client resumes a dropped socket itself, quickly, for about as long as the
 * runtime keeps a dropped session (KIOSK_GRACE_MS, 30 s by default), so a short cut keeps the
 * conversation. Whatever the client does not recover from — an outage past its attempts, a session
 * the runtime ended (`pause`, an operator's close, `replaced` …), a connection refused while the
 * runtime restarts — the page itself starts a new client after PAGE_BACKOFF's wait, asking for the
 * session back (`resume: true`, a new one starts when it is gone), and goes on doing so for as long
 * as it takes.
 */

/** The client's own resume (its `reconnect` option): attempts 0.5–5 s apart, for at most 25 s. */
export const CLIENT_RECONNECT = { baseMs: 500, maxDelayMs: 5_000, maxAttempts: 8, maxTotalMs: 25_000 };

/** Between two clients of the page: 2 s, doubling, never more than 15 s apart, never giving up. */
export const PAGE_BACKOFF = { baseMs: 2_000, maxDelayMs: 15_000, maxAttempts: Infinity, maxTotalMs: Infinity };

/**
 * After `replaced` (another device, or another tab, took the senior's session): wait this long
 * before taking it back, so that two pages left open on one token take turns once a minute rather
 * than in a tight loop.
 */
export const REPLACED_WAIT_MS = 60_000;

/** Typed messages kept while the page is offline, sent in order once it is connected again. */
export const MAX_WAITING_MESSAGES = 3;

/**
 * Setting up the audio (speaker, microphone) may take this long; past it the page connects in text.
 * A browser that lets nothing play before a gesture never finishes it: the page then sets it up on the
 * first tap or click.
 */
export const VOICE_SETUP_MS = 4_000;

/** Caption lines the page keeps on screen (the senior's and Kohami's); older ones go, so a page left on for weeks stays small. */
export const MAX_CAPTIONS = 30;
