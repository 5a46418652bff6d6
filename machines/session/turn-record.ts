import { now } from './clock.ts';
import type { ChatMessage, Flux } from './ports.ts';
import type { ReplyDone, SessionContext, Turn } from './session.types.ts';
import { appendToWindow } from './window.ts';

export function isStrictPrefix(heard: string, reply: string): boolean {
  return heard.length < reply.length && reply.startsWith(heard);
}

export interface FinishParams {
  text: string;
  flux: Flux;
  interrupted?: boolean;
  cacheTicket?: unknown;
}

export function completeTurn(context: SessionContext, params: FinishParams): Pick<SessionContext, 'turns' | 'window' | 'current'> {
  const current = context.current!;
  return recordTurn(context, current, params);
}

/**
 * Appends the turn record, and its reply to the window: after the question, `asked`, when the turn is
 * recorded at once (a CacheFlux hit); otherwise the window already ends with it (`beginTurn`).
 */
export function recordTurn(
  context: SessionContext,
  started: { turnId: string; transcript: string; startedAt: number },
  params: FinishParams,
  asked: ChatMessage[] = [],
): Pick<SessionContext, 'turns' | 'window' | 'current'> {
  const turn: Turn = {
    turnId: started.turnId,
    transcript: started.transcript,
    reply: params.text,
    flux: params.flux,
    latencyMs: now() - started.startedAt,
    interrupted: params.interrupted === true,
    startedAt: started.startedAt,
    ...(params.flux === 'sos' && context.lastSosReason ? { sosReason: context.lastSosReason } : {}),
  };
  const reply: ChatMessage = { role: 'assistant', content: params.text, ...(params.interrupted ? { interrupted: true } : {}) };
  const added = params.text ? [...asked, reply] : asked;
  return { turns: [...context.turns, turn], window: added.length > 0 ? appendToWindow(context.window, added, context.windowBudget) : context.window, current: null };
}

/** The exchange before the current question (the window ends with it), for follow-up keys. */
export function previousExchange(window: readonly ChatMessage[]): { question: string; reply: string } | null {
  const user = window.at(-3);
  const assistant = window.at(-2);
  return user?.role === 'user' && assistant?.role === 'assistant' ? { question: user.content, reply: assistant.content } : null;
}

/** The context update and the `reply.done` of a turn ending with `params`. */
export function finishedTurn(context: SessionContext, params: FinishParams): { update: ReturnType<typeof completeTurn>; done: ReplyDone } {
  const update = completeTurn(context, params);
  const done = replyDoneOf(update.turns.at(-1)!);
  if (params.cacheTicket) done.cacheTicket = params.cacheTicket;
  return { update, done };
}

/**
 * The SOS line. Before any chunk, the kiosk hears it alone; after some, the senior heard part of a
 * reply, so a short closing line follows what was said and `reply.done` carries exactly what the
 * kiosk received — captions, window and close-time jobs agree with what was spoken.
 */
export function sosEnding(context: SessionContext): { delta: { type: 'reply.delta'; turnId: string; text: string } | null; update: ReturnType<typeof completeTurn>; done: ReplyDone } | null {
  const current = context.current;
  if (!current) return null;
  let text = context.cacheFlux.sosFallback();
  let delta: { type: 'reply.delta'; turnId: string; text: string } | null = null;
  if (current.chunks > 0) {
    const line = current.reply.trim() === '' ? text : context.cacheFlux.sosAfterPartial();
    const closing = /\s$/.test(current.reply) ? line : ` ${line}`;
    delta = { type: 'reply.delta', turnId: current.turnId, text: closing };
    text = current.reply + closing;
  }
  const { update, done } = finishedTurn(context, { text, flux: 'sos' });
  return { delta, update, done };
}

export function replyDoneOf(turn: Turn): ReplyDone {
  const done: ReplyDone = { type: 'reply.done', turnId: turn.turnId, text: turn.reply, flux: turn.flux, latencyMs: turn.latencyMs };
  if (turn.interrupted) done.interrupted = true;
  if (turn.sosReason) done.sosReason = turn.sosReason;
  return done;
}
