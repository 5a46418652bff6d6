import { createActor, type Actor } from 'xstate';
import type { sessionMachine, SessionActor } from '../../../machines/session/session.machine.ts';
import { SentenceChunker } from '../../../machines/voice/sentence-chunker.ts';
import type { SpeakerPort, SpeechPiece } from '../../../machines/voice/voice.port.ts';
import type { LineLookup } from '../reply-audio.ts';
import type { Replay } from './replay.ts';

/** The work a turn asks for, in the order it asks: what a speculation records and a turn may adopt. */
export type WorkKind = 'recall' | 'cache' | 'agent' | 'speech';

export interface Recorded {
  /** What was asked, exactly (a transcript, a serialized request, a sentence). */
  key: string;
  value: Promise<unknown> | Replay<unknown>;
  /** Stops the work: the speculation's abort, or the adopting turn's. */
  controller: AbortController;
  adopted: boolean;
}

export type PreemptiveTurnEnd = 'committed' | 'aborted';

/** After its commit, a speculation's work not adopted within this long is stopped (the turn went elsewhere). */
export const ADOPTION_WINDOW_MS = 10_000;

export interface PreemptiveTurnOptions {
  transcript: string;
  actor: SessionActor;
  shadowMachine: typeof sessionMachine;
  /** `opus`: the session's reply audio is Opus, so its first sentence is recorded as the speaker's Opus (relayed, not encoded). */
  speech: { speaker: SpeakerPort; lines: LineLookup; opus?: boolean };
  recordSpeech(text: string, signal: AbortSignal): Replay<SpeechPiece>;
  /** Once, when it is over: how it ended and which calls it made that no turn used. */
  onEnd(outcome: PreemptiveTurnEnd, unused: Array<'model' | 'speech'>): void;
}

/**
 * One speculative turn: a shadow of the session actor, restored from its state between turns, is
 * given the interim transcript as a turn and runs it through the recording ports — recall, the
 * semantic cache, the model — while the first sentence of its reply is sent to speech. It sends
 * nothing to the kiosk and touches nothing of the session: the shadow's window, turns and emitted
 * events die with it, and only the real turn writes the cache or feeds the close-time jobs. When the
 * end of turn is confirmed on the same transcript (`commit`), the real turn adopts the recorded work;
 * otherwise (`abort`) every call still running is stopped.
 */
export class PreemptiveTurn {
  readonly transcript: string;
  state: 'running' | 'committed' | 'ended' = 'running';
  private readonly work = new Map<WorkKind, Recorded>();
  private shadow: Actor<typeof sessionMachine> | null = null;
  private readonly chunker = new SentenceChunker();
  private text = '';
  /** The shadow's reply needs no speech request of its own (a pre-synthesized line, the SOS line, none). */
  private shadowAnswered = false;
  private timer: NodeJS.Timeout | null = null;

  private readonly o: PreemptiveTurnOptions;

  constructor(o: PreemptiveTurnOptions) {
    this.o = o;
    this.transcript = o.transcript;
  }

  run(): void {
    // Restored, the shadow enters no state, so it arms none of the session's timers; `input` is unused.
    const shadow = createActor(this.o.shadowMachine, { snapshot: this.o.actor.getPersistedSnapshot(), input: this.o.actor.getSnapshot().context });
    this.shadow = shadow;
    shadow.on('reply.delta', (e) => this.delta(e.text));
    shadow.on('reply.done', (e) => this.done(e.text, e.flux === 'sos'));
    // A shadow that fails is only a speculation lost (XState would otherwise rethrow its error, unobserved, out of a timer).
    shadow.subscribe({ error: () => this.abort() });
    shadow.start();
    // The session's own turn on the copy. CacheFlux's answers need no head start (they are instant):
    // the caller has left them out, so CacheFlux misses here too, and its cursors do not move.
    shadow.send({ type: 'TURN', turnId: 'preemptive', transcript: this.transcript });
  }

  record(kind: WorkKind, recorded: Recorded): void {
    if (this.state !== 'running') return recorded.controller.abort();
    this.work.get(kind)?.controller.abort();
    this.work.set(kind, recorded);
  }

  /** The end of turn came on this transcript: the turn about to start adopts what was recorded. */
  commit(): void {
    if (this.state !== 'running') return;
    this.state = 'committed';
    this.stopShadow();
    // Nothing asked yet (the end came at once): the turn does all of its work itself.
    if (this.work.size === 0) return this.end('committed');
    this.timer = setTimeout(() => this.end('committed'), ADOPTION_WINDOW_MS);
    this.timer.unref();
  }

  /** The senior went on, the transcript changed, or the session went: everything still running stops. */
  abort(): void {
    if (this.state === 'ended') return;
    this.end(this.state === 'committed' ? 'committed' : 'aborted');
  }

  /** Work of `kind` is recorded and not handed over yet. */
  has(kind: WorkKind): boolean {
    const recorded = this.work.get(kind);
    return recorded !== undefined && !recorded.adopted;
  }

  /** Hands the recorded work of `kind` to the turn if it asks exactly `key` (once). */
  adopt(kind: WorkKind, key: string, signal: AbortSignal): Recorded | null {
    const recorded = this.work.get(kind);
    if (this.state !== 'committed' || !recorded || recorded.adopted || recorded.key !== key || recorded.controller.signal.aborted) return null;
    recorded.adopted = true;
    if (signal.aborted) recorded.controller.abort();
    else signal.addEventListener('abort', () => recorded.controller.abort(), { once: true });
    // Nothing left to hand over (the shadow stopped at the commit): the speculation is done.
    if ([...this.work.values()].every((w) => w.adopted)) this.end('committed');
    return recorded;
  }

  private delta(text: string): void {
    if (this.work.has('speech') || this.shadowAnswered) return;
    this.text += text;
    // As the reply's audio does: a pre-synthesized line arriving as a delta is spoken from RAM.
    if (this.o.speech.lines(text.trim())) return this.noSpeech();
    const [first] = this.chunker.push(text);
    if (first !== undefined) this.speak(first);
  }

  private done(fullText: string, sos: boolean): void {
    if (this.work.has('speech') || this.shadowAnswered) return;
    if (sos) return this.noSpeech();
    const pieces = this.text === '' ? (this.o.speech.lines(fullText.trim()) ? [] : this.chunker.push(fullText)) : [];
    const [first] = [...pieces, ...this.chunker.flush()];
    if (first === undefined) return this.noSpeech();
    this.speak(first);
  }

  private speak(sentence: string): void {
    this.stopShadow();
    if (this.o.speech.lines(sentence)) return this.noSpeech();
    const controller = new AbortController();
    this.record('speech', { key: sentence, value: this.o.recordSpeech(sentence, controller.signal), controller, adopted: false });
  }

  private noSpeech(): void {
    this.shadowAnswered = true;
    this.stopShadow();
  }

  private stopShadow(): void {
    this.shadow?.stop();
    this.shadow = null;
  }

  private end(outcome: PreemptiveTurnEnd): void {
    if (this.state === 'ended') return;
    this.state = 'ended';
    this.stopShadow();
    if (this.timer) clearTimeout(this.timer);
    const unused: Array<'model' | 'speech'> = [];
    for (const [kind, recorded] of this.work) {
      if (recorded.adopted) continue;
      recorded.controller.abort();
      if (kind === 'agent') unused.push('model');
      if (kind === 'speech') unused.push('speech');
    }
    this.o.onEnd(outcome, unused);
  }
}
