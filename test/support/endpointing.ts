/**
 * End-of-turn settings for tests about something else than turn-taking: every utterance ends after
 * 200–400 ms of silence whatever its ending (the scripted recognizer's interim words rarely end a
 * sentence), so those tests need only a short tail of silence and stay quick.
 */
export const QUICK_ENDPOINT = { ENDPOINT_MIN_MS: '200', ENDPOINT_SILENCE_MS: '300', ENDPOINT_UNFINISHED_MS: '400', ENDPOINT_MAX_MS: '400' } as const;
