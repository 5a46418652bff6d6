import { KioskError } from './errors.ts';
import { MAX_TRANSCRIPT_CHARS, MAX_TURN_ID_BYTES, MAX_TURN_ID_CHARS } from './protocol.ts';

/** The runtime remembers a session's last 1,000 turnIds (docs/protocol.md): the client checks as many. */
export const REMEMBERED_TURN_IDS = 1_000;

const utf8 = new TextEncoder();
/** `String.prototype.isWellFormed`, which ES2022's lib does not declare. */
const isWellFormed = (s: string): boolean => (s as string & { isWellFormed(): boolean }).isWellFormed();

/** Why `turnId` breaks the protocol's rules, or null. */
export function turnIdProblem(turnId: string): string | null {
  if (turnId.length < 1 || turnId.length > MAX_TURN_ID_CHARS) return `a turnId is 1–${MAX_TURN_ID_CHARS} characters, got ${turnId.length}`;
  if (!isWellFormed(turnId)) return 'a turnId must be well-formed Unicode (no lone surrogate)';
  const bytes = utf8.encode(turnId).length;
  if (bytes > MAX_TURN_ID_BYTES) return `a turnId is at most ${MAX_TURN_ID_BYTES} bytes in UTF-8, got ${bytes}`;
  return null;
}

/** Why `transcript` cannot be a turn, or null. */
export function transcriptProblem(transcript: string): string | null {
  if (transcript.trim().length === 0) return 'a transcript must not be blank';
  if (transcript.length > MAX_TRANSCRIPT_CHARS) return `a transcript is at most ${MAX_TRANSCRIPT_CHARS} characters, got ${transcript.length}`;
  return null;
}

/**
 * Turn ids, unique within a session as the runtime requires: a random prefix per client, so that a
 * second client resuming the same session (another process, a reloaded page) does not reuse the first
 * one's `t1`, and a count. Ids given by the caller are checked against the last ones used.
 */
export class TurnIds {
  private readonly prefix: string;
  private count = 0;
  private readonly used = new Set<string>();

  constructor(prefix: string) {
    this.prefix = prefix;
  }

  next(): string {
    let id: string;
    do id = `${this.prefix}${++this.count}`;
    while (this.used.has(id));
    return id;
  }

  /** Marks `turnId` used; throws a KioskError (`invalid_argument`) for one that is malformed or already used. */
  claim(turnId: string): void {
    const problem = turnIdProblem(turnId) ?? (this.used.has(turnId) ? `turnId ${JSON.stringify(turnId)} was already used in this session` : null);
    if (problem) throw new KioskError('invalid_argument', problem, { turnId });
    this.used.add(turnId);
    if (this.used.size > REMEMBERED_TURN_IDS) this.used.delete(this.used.values().next().value!);
  }
}
