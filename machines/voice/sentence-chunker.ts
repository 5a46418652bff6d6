/**
 * Cuts a streamed French reply into the pieces sent to text-to-speech, one request each. Speech
 * starts as soon as the first piece is complete, so the first clause of a reply goes early, and a
 * piece never ends inside « M. Dupont », « 3,5 », « 12.30 » or « 10 h 30 ». A terminator is a
 * boundary only once the whitespace after it has arrived, which is what keeps « 12.|30 » whole
 * when a delta ends on the dot.
 *
 * One chunker per reply: `consumed` is the text offset (in the reply) reached by the pieces
 * returned so far, which is what `reply.audio.mark` reports.
 */

/** Words before a dot that never end a sentence. Compared as written (« M. » is Monsieur, « m. » is not used). */
const ABBREVIATIONS = new Set([
  'M', 'MM', 'Mme', 'Mmes', 'Mlle', 'Mlles', 'Dr', 'Drs', 'Pr', 'Me', 'Mgr', 'St', 'Ste', 'Sts',
  'cf', 'av', 'bd', 'boul', 'env', 'ex', 'p', 'vol', 'chap', 'n', 'no', 'tél', 'Tél', 'apr', 'réf',
]);
const TERMINATORS = '.!?…';
/** What may follow a terminator before the whitespace: closing quotes and brackets, French thin spaces. */
const CLOSERS = /[»”"')\]\u00a0\u202f]/;
const CLAUSE_MARKS = ',;:';
/** The early first clause must carry some meaning on its own (« Oui, » is too short to be worth a request). */
const FIRST_CLAUSE_MIN_WORDS = 4;
/** A reply without punctuation is still spoken in pieces of about this size. */
const MAX_PIECE_CHARS = 300;

export class SentenceChunker {
  private buffer = '';
  private emitted = false;
  private consumedChars = 0;

  /** Text offset in the reply of the end of the last piece returned. */
  get consumed(): number {
    return this.consumedChars;
  }

  /** Adds a reply delta; returns the pieces it completed. */
  push(delta: string): string[] {
    this.buffer += delta;
    const pieces: string[] = [];
    for (;;) {
      const end = this.boundary();
      if (end === null) break;
      this.take(end, pieces);
    }
    return pieces;
  }

  /** End of the reply: whatever is left is the last piece. */
  flush(): string[] {
    const pieces: string[] = [];
    if (this.buffer.length > 0) this.take(this.buffer.length, pieces);
    return pieces;
  }

  private take(end: number, pieces: string[]): void {
    const piece = this.buffer.slice(0, end).trim();
    this.buffer = this.buffer.slice(end);
    this.consumedChars += end;
    if (piece.length > 0) {
      pieces.push(piece);
      this.emitted = true;
    }
  }

  /** End index (exclusive) of the first complete piece in the buffer, or null to wait for more text. */
  private boundary(): number | null {
    const text = this.buffer;
    for (let i = 0; i < text.length; i++) {
      const c = text[i]!;
      if (TERMINATORS.includes(c)) {
        let k = i;
        while (k < text.length && TERMINATORS.includes(text[k]!)) k++;
        const singleDot = c === '.' && k === i + 1;
        while (k < text.length && CLOSERS.test(text[k]!)) k++;
        if (k === text.length) return null;
        if (/\s/.test(text[k]!) && !(singleDot && abbreviationBefore(text, i))) return k;
        i = k - 1;
      } else if (!this.emitted && CLAUSE_MARKS.includes(c)) {
        if (i + 1 === text.length) return null;
        if (/\s/.test(text[i + 1]!) && wordCount(text.slice(0, i)) >= FIRST_CLAUSE_MIN_WORDS) return i + 1;
      }
    }
    return text.length > MAX_PIECE_CHARS ? forcedCut(text) : null;
  }
}

function abbreviationBefore(text: string, dot: number): boolean {
  const word = /[\p{L}]+$/u.exec(text.slice(Math.max(0, dot - 12), dot))?.[0];
  if (word === undefined) return false;
  // A lone capital is an initial (« J. Dupont », « J.-C. »).
  return ABBREVIATIONS.has(word) || /^\p{Lu}$/u.test(word);
}

function wordCount(text: string): number {
  return text.split(/\s+/).filter((word) => /[\p{L}\p{N}]/u.test(word)).length;
}

/** Cuts an over-long piece after its last clause mark, else at its last space. */
function forcedCut(text: string): number {
  const window = text.slice(0, MAX_PIECE_CHARS);
  const clause = Math.max(...[...CLAUSE_MARKS].map((mark) => window.lastIndexOf(`${mark} `)));
  if (clause > 0) return clause + 1;
  const space = window.lastIndexOf(' ');
  return space > 0 ? space : MAX_PIECE_CHARS;
}
