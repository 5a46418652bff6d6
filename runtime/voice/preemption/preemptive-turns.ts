import { fromPromise } from 'xstate';
import type { AgentChunk, AgentPort, AgentRequest, CacheLookup, RecallOutcome, RecallPort, SemanticCachePort, WindowSummarizerPort } from '../../../machines/session/ports.ts';
import { agentReplyLogic, recallLogic, semanticCacheLogic } from '../../../machines/session/session.actors.ts';
import { betweenTurns, sessionMachine, type SessionActor } from '../../../machines/session/session.machine.ts';
import type { SpeakerPort, SpeechPiece } from '../../../machines/voice/voice.port.ts';
import type { LineLookup } from '../reply-audio.ts';
import { Replay } from './replay.ts';
import { PreemptiveTurn, type PreemptiveTurnEnd, type Recorded, type WorkKind } from './preemptive-turn.ts';

/** The ports a turn's work goes through, as the session machine is given them. */
export interface TurnPorts {
  recall: RecallPort;
  cache: SemanticCachePort;
  agent: AgentPort;
}

export interface PreemptiveTurnMetrics {
  /** A speculative turn ended: `committed` (its transcript became the turn) or `aborted`. */
  ended(outcome: PreemptiveTurnEnd): void;
  /** A model call or speech request made for a speculation that no turn used. */
  wasted(kind: 'model' | 'speech'): void;
}

export interface PreemptiveTurnSettings {
  /** Start the turn's work this long before the end of a pause is due (PREEMPTIVE_LEAD_MS, ms of silence). */
  leadMs: number;
  /** At most this many preemptive turns in one utterance: a senior who keeps pausing costs a bounded number of calls. */
  maxPerUtterance: number;
  /** CacheFlux answers this transcript itself, in memory: nothing to start early. */
  answersAtOnce(transcript: string): boolean;
}

/** A senior who pauses again and again within one utterance costs at most this many speculative turns (LiveKit: 3). */
export const SPECULATIONS_PER_UTTERANCE = 3;

/** A reply's chunks and a sentence's audio are bounded in RAM like the replies they are. */
const MAX_AGENT_CHUNKS = 4_096;
const MAX_SPEECH_CHUNKS = 2_048;

/**
 * The preemptive turn, process-wide: at most one speculation per senior (a senior has one live
 * session). The session actors' ports adopt a committed speculation's work when they ask for exactly
 * what it asked (the same recall, the same lookup, the same model request, the same sentence), and
 * otherwise do the work themselves; the speculation itself runs a shadow copy of the session machine
 * on recording ports, so the turn's logic is the machine's, written once.
 */
export class PreemptiveTurns {
  readonly leadMs: number;
  readonly maxPerUtterance: number;
  readonly answersAtOnce: (transcript: string) => boolean;
  private readonly bySenior = new Map<string, PreemptiveTurn>();
  /** The session machine with the recording ports: a shadow turn leaves its work here, nothing else. */
  readonly shadowMachine: typeof sessionMachine;

  private readonly ports: TurnPorts;
  private readonly metrics: PreemptiveTurnMetrics;

  constructor(
    ports: TurnPorts,
    metrics: PreemptiveTurnMetrics,
    settings: PreemptiveTurnSettings,
  ) {
    this.ports = ports;
    this.metrics = metrics;
    this.leadMs = settings.leadMs;
    this.maxPerUtterance = settings.maxPerUtterance;
    this.answersAtOnce = settings.answersAtOnce;
    this.shadowMachine = sessionMachine.provide({
      actors: {
        recall: recallLogic({ recall: (input) => this.recordPromise(input.seniorId, 'recall', input.transcript, (signal) => ports.recall.recall(input, signal)) }),
        semanticCache: semanticCacheLogic({ lookup: (input) => this.recordPromise(input.seniorId, 'cache', lookupKey(input), (signal) => ports.cache.lookup(input, signal)) }),
        agentReply: agentReplyLogic({ stream: (request, signal) => this.recordAgent(request, signal) }),
        // The shadow never folds its window: a fold is the real session's, and a shadow that folded
        // would ask the model something else than the real turn will.
        summarizeWindow: fromPromise<string | null, Parameters<WindowSummarizerPort['summarize']>[0]>(({ signal }) => new Promise((resolve) => signal.addEventListener('abort', () => resolve(null), { once: true }))),
      },
    });
  }

  /** The ports the live sessions' machine is given: a committed speculation's work when it matches. */
  adoptingPorts(): TurnPorts {
    const { ports } = this;
    return {
      recall: { recall: (input, signal) => this.adoptPromise<RecallOutcome>(input.seniorId, 'recall', () => input.transcript, signal) ?? ports.recall.recall(input, signal) },
      cache: { lookup: (input, signal) => this.adoptPromise<CacheLookup>(input.seniorId, 'cache', () => lookupKey(input), signal) ?? ports.cache.lookup(input, signal) },
      agent: {
        stream: (request, signal) => {
          const recorded = this.take(request.seniorId, 'agent', () => agentKey(request), signal);
          return recorded ? (recorded.value as Replay<AgentChunk>).read(signal) : ports.agent.stream(request, signal);
        },
      },
    };
  }

  /** A session's speaker: the committed speculation's first sentence, already under way, when the reply starts with it. */
  speakerFor(seniorId: string, speaker: SpeakerPort): SpeakerPort {
    const recorded = (text: string, signal: AbortSignal) => this.take(seniorId, 'speech', () => text, signal)?.value as Replay<SpeechPiece> | undefined;
    const opus = speaker.synthesizeOpus?.bind(speaker);
    return {
      voiceId: speaker.voiceId,
      sampleRate: speaker.sampleRate,
      synthesize: (text, signal) => {
        const replay = recorded(text, signal);
        return replay ? pcmOnly(replay.read(signal)) : speaker.synthesize(text, signal);
      },
      // The speculation recorded in the session's format (`speech.opus`): Opus packets are relayed as they came.
      ...(opus ? { synthesizeOpus: (text: string, signal: AbortSignal) => recorded(text, signal)?.read(signal) ?? opus(text, signal) } : {}),
    };
  }

  /**
   * Starts a speculative turn on `transcript` for the session's senior, from the session's state now,
   * replacing the senior's previous one. Null when the session is not between turns (a reply being
   * written, a window being folded): the real turn will do the work.
   */
  start(actor: SessionActor, transcript: string, speech: { speaker: SpeakerPort; lines: LineLookup; opus?: boolean }): PreemptiveTurn | null {
    const snapshot = actor.getSnapshot();
    if (!betweenTurns(snapshot)) return null;
    const seniorId = snapshot.context.seniorId;
    this.bySenior.get(seniorId)?.abort();
    const speculation = new PreemptiveTurn({
      transcript,
      actor,
      shadowMachine: this.shadowMachine,
      speech,
      recordSpeech: (text, signal) => new Replay<SpeechPiece>(speech.opus && speech.speaker.synthesizeOpus ? speech.speaker.synthesizeOpus(text, signal) : speech.speaker.synthesize(text, signal), MAX_SPEECH_CHUNKS),
      onEnd: (outcome, unused) => {
        if (this.bySenior.get(seniorId) === speculation) this.bySenior.delete(seniorId);
        this.metrics.ended(outcome);
        for (const kind of unused) this.metrics.wasted(kind);
      },
    });
    this.bySenior.set(seniorId, speculation);
    speculation.run();
    return speculation;
  }

  private recordPromise<V>(seniorId: string, kind: 'recall' | 'cache', key: string, start: (signal: AbortSignal) => Promise<V>): Promise<V> {
    const speculation = this.running(seniorId);
    if (!speculation) return Promise.reject(new Error('no speculative turn for this senior'));
    const controller = new AbortController();
    const value = start(controller.signal);
    // Read by the shadow, maybe later by the turn; a failure is each reader's to handle.
    value.catch(() => undefined);
    speculation.record(kind, { key, value, controller, adopted: false });
    return value;
  }

  private recordAgent(request: AgentRequest, signal: AbortSignal): AsyncIterable<AgentChunk> {
    const speculation = this.running(request.seniorId);
    if (!speculation) return failing(new Error('no speculative turn for this senior'));
    const controller = new AbortController();
    const replay = new Replay(this.ports.agent.stream(request, controller.signal), MAX_AGENT_CHUNKS);
    speculation.record('agent', { key: agentKey(request), value: replay, controller, adopted: false });
    return replay.read(signal);
  }

  private running(seniorId: string): PreemptiveTurn | null {
    const speculation = this.bySenior.get(seniorId);
    return speculation?.state === 'running' ? speculation : null;
  }

  private adoptPromise<V>(seniorId: string, kind: 'recall' | 'cache', key: () => string, signal: AbortSignal): Promise<V> | null {
    const recorded = this.take(seniorId, kind, key, signal);
    return recorded ? (recorded.value as Promise<V>) : null;
  }

  /**
   * The committed speculation's work of this kind, if it asked exactly `key`; the taker's abort now stops
   * it. The key (a whole model request serialized) is built only when there is a speculation to compare
   * it with: a text turn, or a voice turn without one, pays a map lookup.
   */
  private take(seniorId: string, kind: WorkKind, key: () => string, signal: AbortSignal): Recorded | null {
    const speculation = this.bySenior.get(seniorId);
    return speculation?.state === 'committed' && speculation.has(kind) ? speculation.adopt(kind, key(), signal) : null;
  }
}

/** A PCM session's recorded sentence: PCM only (a session records in its own reply format, so a packet here is a fault of ours). */
async function* pcmOnly(pieces: AsyncIterable<SpeechPiece>): AsyncIterable<Int16Array> {
  for await (const piece of pieces) {
    if (!(piece instanceof Int16Array)) throw new Error('preemptive turn: an Opus sentence replayed to a PCM reply');
    yield piece;
  }
}

function lookupKey(input: Parameters<SemanticCachePort['lookup']>[0]): string {
  return JSON.stringify([input.question, input.previous, input.promptVersion]);
}

/** Everything the model is asked: a speculation is adopted only for the very same request. */
function agentKey(request: AgentRequest): string {
  return JSON.stringify(request);
}

async function* failing(err: Error): AsyncGenerator<AgentChunk> {
  throw err;
}
