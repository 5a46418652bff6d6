import type { ChatMessage } from './ports.ts';

/** Messages of the live session kept for the model; older ones fall out first. */
export const DEFAULT_WINDOW_SIZE = 24;

export function appendToWindow(window: readonly ChatMessage[], message: ChatMessage, size = DEFAULT_WINDOW_SIZE): ChatMessage[] {
  const next = [...window, message];
  return next.length > size ? next.slice(next.length - size) : next;
}
