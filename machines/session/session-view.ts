import type { Flux } from './ports.ts';
import type { SessionContext, SosReason, VoiceActivity, VoiceStages } from './session.types.ts';
import { windowCharacters } from './window.ts';

/**
 * What an operator may see of a live session: state, counts, lengths, flags and timings.
 * Never a transcript, a reply or a fact — operators see state, not conversations.
 */
export interface SessionView {
  sessionId: string;
  seniorId: string;
  /** The active leaf states, e.g. "conversation.turn.agent · connection.attached". */
  state: string;
  /** The flow the current turn is in (cacheFlux, recall, agent), or null between turns. */
  currentFlux: string | null;
  connection: 'attached' | 'detached' | 'closed';
  turnCount: number;
  lastTurn: { flux: Flux; latencyMs: number; interrupted: boolean; sosReason: SosReason | null } | null;
  /** Latencies of the most recent turns, oldest first (for the console's chart). */
  recentLatenciesMs: number[];
  window: { messages: number; characters: number };
  current: { transcriptLength: number; replyLength: number; chunks: number; retries: number; facts: number; startedAt: number } | null;
  startedAt: number;
  closeReason: string | null;
  /** Voice mode: what the pipeline is doing, and the latest voice turn's stage timings (ms). */
  voice: { state: VoiceActivity; stages: VoiceStages | null };
}

const RECENT = 20;

/** Flattens a state value into its active leaf paths. */
export function statePaths(value: unknown, prefix = ''): string[] {
  if (typeof value === 'string') return [prefix ? `${prefix}.${value}` : value];
  if (!value || typeof value !== 'object') return [];
  return Object.entries(value).flatMap(([key, child]) => statePaths(child, prefix ? `${prefix}.${key}` : key));
}

export type RedactedContext = Omit<SessionView, 'state' | 'currentFlux' | 'connection' | 'voice'> & { voiceStages: VoiceStages | null };

/** The context without a word of conversation: also what the Stately inspector is shown. */
export function redactContext(context: SessionContext): RedactedContext {
  const last = context.turns.at(-1);
  return {
    sessionId: context.sessionId,
    seniorId: context.seniorId,
    turnCount: context.turns.length,
    lastTurn: last ? { flux: last.flux, latencyMs: last.latencyMs, interrupted: last.interrupted, sosReason: last.sosReason ?? null } : null,
    recentLatenciesMs: context.turns.slice(-RECENT).map((t) => t.latencyMs),
    window: { messages: context.window.length, characters: windowCharacters(context.window) },
    current: context.current && {
      transcriptLength: context.current.transcript.length,
      replyLength: context.current.reply.length,
      chunks: context.current.chunks,
      retries: context.current.retries,
      facts: context.current.facts.length,
      startedAt: context.current.startedAt,
    },
    startedAt: context.startedAt,
    closeReason: context.closeReason,
    voiceStages: context.voiceStages,
  };
}

const VOICE_STATES: Record<string, VoiceActivity> = { off: 'off', listening: 'listening', userSpeaking: 'user_speaking', thinking: 'thinking', speaking: 'speaking' };

export function sessionView(snapshot: { value: unknown; status: string; context: SessionContext }): SessionView {
  const paths = statePaths(snapshot.value).map((p) => p.replace(/^live\./, ''));
  const turnPath = paths.find((p) => p.startsWith('conversation.turn.'));
  const connection = snapshot.status !== 'active' ? 'closed' : paths.includes('connection.detached') ? 'detached' : 'attached';
  const { voiceStages, ...redacted } = redactContext(snapshot.context);
  const voicePath = paths.find((p) => p.startsWith('voice.'));
  return {
    ...redacted,
    voice: { state: VOICE_STATES[voicePath?.slice('voice.'.length) ?? 'off'] ?? 'off', stages: voiceStages },
    state: paths.join(' · '),
    currentFlux: turnPath ? turnPath.split('.')[2]! : null,
    connection,
  };
}

/** One turn as an operator's timeline shows it: its rank, when, which flux, how long, SOS and barge-in. */
export interface TimelineTurn {
  /** 1 for the session's first turn: the kiosk's own turn ids may be any text, so they are not shown. */
  n: number;
  startedAt: number;
  flux: Flux;
  latencyMs: number;
  /** A barge-in: the senior spoke over this reply. */
  interrupted: boolean;
  sosReason: SosReason | null;
}

export interface SessionTimeline {
  sessionId: string;
  startedAt: number;
  /** Every turn of the session so far; `turns` holds the latest TIMELINE_TURNS of them. */
  total: number;
  turns: TimelineTurn[];
  /** The turn in flight: when it began and the flux it is in. */
  current: { startedAt: number; flux: string | null } | null;
}

/** A session may run for days: the timeline sent to a console is its latest turns only. */
export const TIMELINE_TURNS = 100;

/** A session's turns without a word of them: each field is copied by name, never the turn as is. */
export function sessionTimeline(snapshot: { value: unknown; status: string; context: SessionContext }): SessionTimeline {
  const { turns, current, sessionId, startedAt } = snapshot.context;
  const first = Math.max(0, turns.length - TIMELINE_TURNS);
  return {
    sessionId,
    startedAt,
    total: turns.length,
    turns: turns.slice(first).map((t, i) => ({ n: first + i + 1, startedAt: t.startedAt, flux: t.flux, latencyMs: t.latencyMs, interrupted: t.interrupted, sosReason: t.sosReason ?? null })),
    current: current && { startedAt: current.startedAt, flux: sessionView(snapshot).currentFlux },
  };
}

/** Events as the inspector may show them: type, ids and reasons kept, any text replaced by its length. */
export function redactEvent(event: { type: string } & Record<string, unknown>): { type: string } & Record<string, unknown> {
  const out: { type: string } & Record<string, unknown> = { type: event.type };
  for (const [key, value] of Object.entries(event)) {
    if (key === 'type') continue;
    if (key === 'turnId' || key === 'reason') out[key] = value;
    // A voice state and stage timings are names and numbers, never words of the conversation.
    else if (event.type === 'VOICE.STATE' && key === 'state') out[key] = value;
    else if (event.type === 'VOICE.STATE' && key === 'stages' && isTimings(value)) out[key] = value;
    else if (typeof value === 'string') out[`${key}Length`] = value.length;
    else if (value !== undefined) out[key] = '[redacted]';
  }
  return out;
}

function isTimings(value: unknown): boolean {
  return typeof value === 'object' && value !== null && Object.entries(value).every(([k, v]) => (k === 'turnId' ? typeof v === 'string' && v.length <= 128 : typeof v === 'number'));
}
