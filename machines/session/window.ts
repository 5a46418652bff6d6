import type { ChatMessage } from './ports.ts';

/** Tier 1: the live window's budget; past it, its oldest half is folded into a running summary. */
export interface WindowBudget {
  maxMessages: number;
  /** Approximate tokens (characters / 4): French runs close to that with Mistral's tokenizer. */
  maxTokens: number;
}

export const DEFAULT_WINDOW_BUDGET: WindowBudget = { maxMessages: 24, maxTokens: 3000 };
/** The seed's floor: the window never keeps fewer raw messages than this. */
export const MIN_KEPT_MESSAGES = 12;

/** The window's size in characters (what the token estimate and the operators' view are made of). */
export function windowCharacters(window: readonly ChatMessage[]): number {
  let characters = 0;
  for (const message of window) characters += message.content.length;
  return characters;
}

const tokens = (window: readonly ChatMessage[]) => Math.ceil(windowCharacters(window) / 4);

export function overflows(window: readonly ChatMessage[], budget: WindowBudget): boolean {
  return window.length > MIN_KEPT_MESSAGES && (window.length > budget.maxMessages || tokens(window) > budget.maxTokens);
}

/** How many of the oldest messages to fold: half the window, never leaving fewer than the floor. */
export function foldCount(window: readonly ChatMessage[]): number {
  return Math.max(0, Math.min(Math.floor(window.length / 2), window.length - MIN_KEPT_MESSAGES));
}

/**
 * Appends messages (one copy of the window for all of them). The hard cap only matters if folding
 * never completes (a summarizer that hangs): the window stays bounded in memory whatever happens.
 */
export function appendToWindow(window: readonly ChatMessage[], added: readonly ChatMessage[], budget: WindowBudget = DEFAULT_WINDOW_BUDGET): ChatMessage[] {
  const next = window.concat(added);
  const cap = budget.maxMessages * 4;
  return next.length > cap ? next.slice(next.length - cap) : next;
}
