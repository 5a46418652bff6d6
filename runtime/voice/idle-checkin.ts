/**
 * The idle check-in (IDLE_CHECKIN_MS, off by default): after a reply has finished playing, a senior
 * who says nothing for a while hears one gentle line, pre-synthesized, so a kiosk that went quiet
 * does not feel like one that stopped working. Never more than once per silence: when is the
 * turn-taking machine's (its `checkin` region, machines/voice/turn-taking.machine.ts).
 */

/** What the senior hears: kind and short, no question to answer at once. Pre-synthesized with the session's lines. */
export const CHECKIN_LINE = 'Je suis toujours là. Prenez votre temps, je vous écoute.';
