/**
 * Tier 2: the most recent segments are injected into the agent's context at every session start;
 * the older ones are vectorized by the nightly dream and become tier 3, searched only on demand.
 */
export const RECENT_SEGMENTS = 3;
