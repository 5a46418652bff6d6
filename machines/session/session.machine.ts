import { assign, emit, enqueueActions, fromPromise, setup, type ActorRefFrom } from 'xstate';
import { clockNow, now, timeLeft } from './clock.ts';
import type { RecalledFact, WindowSummarizerPort } from './ports.ts';
import { promptVersion } from './prompt.ts';
import { agentNotProvided, noCache, noFacts } from './session.actors.ts';
import {
  AGENT_CALL_MIN_MS,
  DEFAULT_AGENT_STALL_MS,
  DEFAULT_REPLY_MAX_MS,
  type CloseReason,
  type CurrentTurn,
  type SessionContext,
  type SessionEmitted,
  type SessionEvent,
  type SessionInput,
  type SosReason,
} from './session.types.ts';
import { completeTurn, finishedTurn, isStrictPrefix, previousExchange, recordTurn, replyDoneOf, sosEnding, type FinishParams } from './turn-record.ts';
import { appendToWindow, DEFAULT_WINDOW_BUDGET, foldCount, overflows } from './window.ts';

export const sessionMachine = setup({
  types: {
    context: {} as SessionContext,
    events: {} as SessionEvent,
    input: {} as SessionInput,
    emitted: {} as SessionEmitted,
  },
  actors: {
    // Replaced at boot by the memory flux (RecallPort); without memory, no facts.
    recall: noFacts,
    // Replaced at boot by the semantic cache; without it, every lookup is bypassed.
    semanticCache: noCache,
    // Replaced at boot by Mistral Small; without it, folded messages leave no summary.
    summarizeWindow: fromPromise<string | null, Parameters<WindowSummarizerPort['summarize']>[0]>(async ({ input }) => input.previousSummary),
    // Replaced at boot with the model adapter (agentReplyLogic).
    agentReply: agentNotProvided,
  },
  delays: {
    turnBudget: ({ context }) => context.turnBudgetMs,
    // What is left of the stall bound after the latest chunk.
    agentStall: ({ context, system }) => timeLeft(context.current?.lastChunkAt ?? 0, context.agentStallMs, system),
    replyMax: ({ context }) => context.replyMaxMs,
    // What is left of the pause after the latest turn.
    sessionPause: ({ context, system }) => timeLeft(context.lastTurnAt, context.sessionPauseMs, system),
    kioskGrace: ({ context }) => context.kioskGraceMs,
  },
  guards: {
    cacheHit: ({ context }) => context.current?.cacheReply != null,
    turnSincePauseArmed: ({ context }) => context.lastTurnAt !== context.pauseArmedFrom,
    chunkSinceStallArmed: ({ context }) => context.current !== null && context.current.lastChunkAt !== context.current.stallArmedFrom,
    windowOverflows: ({ context }) => overflows(context.window, context.windowBudget),
    noChunkSent: ({ context }) => (context.current?.chunks ?? 0) === 0,
    isCurrentTurn: ({ context, event }) => event.type === 'INTERRUPT' && context.current?.turnId === event.turnId,
    /** Barge-in after the reply's text was complete: its audio was still playing. */
    cutsLastTurn: ({ context, event }) => {
      const last = context.turns.at(-1);
      return event.type === 'INTERRUPT' && event.heard !== undefined && last?.turnId === event.turnId && isStrictPrefix(event.heard, last.reply);
    },
    /** The provider's pause ends too late for the agent's call to have AGENT_CALL_MIN_MS of the turn's budget after it. */
    agentPausedPastBudget: ({ context }) => {
      const paused = context.agentPause?.leftMs ?? 0;
      return paused > 0 && paused + AGENT_CALL_MIN_MS > context.turnBudgetMs - (now() - context.current!.startedAt);
    },
    throttled: ({ event }) => event.type === 'AGENT.FAILED' && event.throttled === true,
    // One quick retry, only before anything was spoken; the running budget still bounds it.
    canRetry: ({ context }) => context.current !== null && context.current.chunks === 0 && context.current.retries === 0,
    emptyReply: ({ context }) => (context.current?.reply.trim() ?? '') === '',
  },
  actions: {
    beginTurn: assign(({ context, event, system }) => {
      if (event.type !== 'TURN' && event.type !== 'CACHE.MISS') return {};
      const current: CurrentTurn = { turnId: event.turnId, transcript: event.transcript, startedAt: now(), reply: '', chunks: 0, retries: 0, facts: [], cacheReply: null, cacheTicket: null, usedTools: false, lastChunkAt: 0, stallArmedFrom: 0 };
      return { current, window: appendToWindow(context.window, [{ role: 'user', content: event.transcript }], context.windowBudget), lastTurnAt: clockNow(system) };
    }),
    /**
     * Flux 1 between turns, the hot path: a CacheFlux reply is recorded and told in this one targetless
     * transition — no state left or entered, no timer armed, no actor started. A miss is raised as
     * `CACHE.MISS`, which starts the turn at the next flux.
     */
    answerFromCacheFlux: enqueueActions(({ context, event, system, enqueue }) => {
      if (event.type !== 'TURN') return;
      const reply = context.cacheFlux.resolve(event.transcript, context.profile);
      if (reply === null) {
        enqueue.raise({ type: 'CACHE.MISS', turnId: event.turnId, transcript: event.transcript });
        return;
      }
      const started = { turnId: event.turnId, transcript: event.transcript, startedAt: now() };
      const update = recordTurn(context, started, { text: reply, flux: 'cache' }, [{ role: 'user', content: event.transcript }]);
      enqueue.assign({ ...update, lastTurnAt: clockNow(system) });
      enqueue.emit(replyDoneOf(update.turns.at(-1)!));
    }),
    armPause: assign(({ context }) => ({ pauseArmedFrom: context.lastTurnAt })),
    /** Flux 1: the per-session CacheFluxAdapter is pure in-memory state (no I/O), so it runs inline. */
    resolveCacheFlux: assign(({ context }) => ({
      current: context.current && { ...context.current, cacheReply: context.cacheFlux.resolve(context.current.transcript, context.profile) },
    })),
    appendChunk: assign(({ context, event, system }) => {
      if (event.type !== 'AGENT.CHUNK' || !context.current) return {};
      return { current: { ...context.current, reply: context.current.reply + event.text, chunks: context.current.chunks + 1, lastChunkAt: clockNow(system) } };
    }),
    armStall: assign(({ context }) => ({ current: context.current && { ...context.current, stallArmedFrom: context.current.lastChunkAt } })),
    emitDelta: emit(({ context, event }) => ({
      type: 'reply.delta' as const,
      turnId: context.current!.turnId,
      text: event.type === 'AGENT.CHUNK' ? event.text : '',
    })),
    countRetry: assign(({ context }) => ({ current: context.current && { ...context.current, retries: context.current.retries + 1 } })),
    setFacts: assign(({ context }, facts: RecalledFact[]) => ({ current: context.current && { ...context.current, facts } })),
    markToolUse: assign(({ context }) => ({ current: context.current && { ...context.current, usedTools: true } })),
    setCacheTicket: assign(({ context }, params: { ticket: unknown }) => ({ current: context.current && { ...context.current, cacheTicket: params.ticket } })),
    setSosReason: assign((_, reason: SosReason) => ({ lastSosReason: reason })),
    startFolding: assign(({ context }) => ({ folding: foldCount(context.window) })),
    /** The folded messages leave the window (new ones were only appended meanwhile). */
    finishFolding: assign(({ context }, params: { summary: string | null }) => ({
      window: context.window.slice(context.folding),
      runningSummary: params.summary ?? context.runningSummary,
      folding: 0,
    })),
    setCloseReason: assign((_, reason: CloseReason) => ({ closeReason: reason })),
    /** Ends the current turn: records it, feeds the window, and tells the kiosk from the same record. */
    finishTurn: enqueueActions(({ context, enqueue }, params: FinishParams) => {
      if (!context.current) return;
      const { update, done } = finishedTurn(context, params);
      enqueue.assign(update);
      enqueue.emit(done);
    }),
    /** The SOS line (`sosEnding`). */
    finishWithSos: enqueueActions(({ context, enqueue }) => {
      const ending = sosEnding(context);
      if (!ending) return;
      if (ending.delta) enqueue.emit(ending.delta);
      enqueue.assign(ending.update);
      enqueue.emit(ending.done);
    }),
    /**
     * The session closes with a turn in flight. At a shutdown the kiosk is about to reconnect
     * elsewhere and the senior would hear nothing for that question: the turn ends on the SOS path
     * (reason `shutdown`), so she hears « Bien sûr, je vous écoute. » (or what was said plus the
     * closing line) and asks again. Any other close keeps what the kiosk received, as a barge-in does
     * (`interruptCurrent`, which follows and finds no turn left after this one).
     */
    endCurrentOnShutdown: enqueueActions(({ context, enqueue }) => {
      if (context.closeReason !== 'shutdown') return;
      const ending = sosEnding({ ...context, lastSosReason: 'shutdown' });
      if (!ending) return;
      if (ending.delta) enqueue.emit(ending.delta);
      enqueue.assign({ ...ending.update, lastSosReason: 'shutdown' });
      enqueue.emit(ending.done);
    }),
    /**
     * Barge-in, a new turn, a lost socket or a close: keep only what the kiosk already received — or, in
     * voice mode, what the senior heard of it.
     */
    interruptCurrent: enqueueActions(({ context, event, enqueue }) => {
      if (!context.current) return;
      const heard = event.type === 'INTERRUPT' && event.heard !== undefined && isStrictPrefix(event.heard, context.current.reply) ? event.heard : context.current.reply;
      const update = completeTurn(context, { text: heard, flux: 'agent', interrupted: true });
      enqueue.assign(update);
      enqueue.emit(replyDoneOf(update.turns.at(-1)!));
    }),
    /** The last turn's reply is cut to what the senior heard, in the turn record and in the window. */
    cutLastTurn: assign(({ context, event }) => {
      if (event.type !== 'INTERRUPT' || event.heard === undefined) return {};
      const last = context.turns.at(-1)!;
      const window = [...context.window];
      let index = window.length - 1;
      while (index >= 0 && !(window[index]!.role === 'assistant' && window[index]!.content === last.reply)) index -= 1;
      if (index >= 0) {
        if (event.heard.trim() === '') window.splice(index, 1);
        else window[index] = { role: 'assistant', content: event.heard, interrupted: true };
      }
      return { turns: [...context.turns.slice(0, -1), { ...last, reply: event.heard, interrupted: true }], window };
    }),
    setVoiceStages: assign(({ context, event }) => ({ voiceStages: event.type === 'VOICE.STATE' && event.stages ? event.stages : context.voiceStages })),
    emitSessionClosed: emit(({ context }) => ({
      type: 'SessionClosed' as const,
      sessionId: context.sessionId,
      seniorId: context.seniorId,
      reason: context.closeReason ?? 'ended',
      startedAt: context.startedAt,
      endedAt: now(),
      turns: context.turns,
    })),
  },
}).createMachine({
  id: 'kohamiSession',
  context: ({ input, self }) => ({
    ...input,
    windowBudget: input.windowBudget ?? DEFAULT_WINDOW_BUDGET,
    agentStallMs: input.agentStallMs ?? DEFAULT_AGENT_STALL_MS,
    replyMaxMs: input.replyMaxMs ?? DEFAULT_REPLY_MAX_MS,
    runningSummary: null,
    folding: 0,
    startedAt: now(),
    turns: [],
    window: [],
    current: null,
    closeReason: null,
    lastSosReason: null,
    voiceStages: null,
    lastTurnAt: clockNow(self.system),
    pauseArmedFrom: clockNow(self.system),
  }),
  initial: 'live',
  states: {
    live: {
      type: 'parallel',
      on: {
        CLOSE: { target: 'closed', actions: [{ type: 'setCloseReason', params: ({ event }) => event.reason }] },
      },
      states: {
        connection: {
          initial: 'attached',
          states: {
            attached: { on: { 'SOCKET.LOST': 'detached' } },
            detached: {
              on: { 'SOCKET.ATTACHED': 'attached' },
              after: { kioskGrace: { target: '#kohamiSession.closed', actions: [{ type: 'setCloseReason', params: 'disconnected' }] } },
            },
          },
        },
        // The pause is counted from the senior's last turn, whatever the conversation is doing. A turn
        // only notes its time: the timer is not re-armed per turn but, when it fires after turns came,
        // for what is left of the pause after the latest.
        inactivity: {
          initial: 'counting',
          states: {
            counting: {
              entry: 'armPause',
              after: {
                sessionPause: [
                  { guard: 'turnSincePauseArmed', target: 'counting', reenter: true },
                  { target: '#kohamiSession.closed', actions: [{ type: 'setCloseReason', params: 'pause' }] },
                ],
              },
            },
          },
        },
        memory: {
          initial: 'steady',
          states: {
            steady: { always: { guard: 'windowOverflows', target: 'folding' } },
            folding: {
              entry: 'startFolding',
              invoke: {
                src: 'summarizeWindow',
                input: ({ context }) => ({ previousSummary: context.runningSummary, messages: context.window.slice(0, context.folding) }),
                onDone: { target: 'steady', actions: [{ type: 'finishFolding', params: ({ event }) => ({ summary: event.output }) }] },
                // A failed fold still bounds the window; the previous summary stays.
                onError: { target: 'steady', actions: [{ type: 'finishFolding', params: { summary: null } }] },
              },
            },
          },
        },
        // Voice mode's pipeline state, reported by the runtime (the kiosk socket's voice session).
        voice: {
          initial: 'off',
          on: {
            'VOICE.STATE': [
              { guard: ({ event }) => event.state === 'listening', target: '.listening', actions: 'setVoiceStages' },
              { guard: ({ event }) => event.state === 'user_speaking', target: '.userSpeaking', actions: 'setVoiceStages' },
              { guard: ({ event }) => event.state === 'thinking', target: '.thinking', actions: 'setVoiceStages' },
              { guard: ({ event }) => event.state === 'speaking', target: '.speaking', actions: 'setVoiceStages' },
              { target: '.off', actions: 'setVoiceStages' },
            ],
            'SOCKET.LOST': '.off',
          },
          states: { off: {}, listening: {}, userSpeaking: {}, thinking: {}, speaking: {} },
        },
        conversation: {
          initial: 'idle',
          on: {
            INTERRUPT: { guard: 'cutsLastTurn', actions: 'cutLastTurn' },
          },
          states: {
            idle: {
              on: {
                TURN: { actions: 'answerFromCacheFlux' },
                // CacheFlux was already asked (and had nothing): the turn starts at recall.
                'CACHE.MISS': { target: 'turn.recall', actions: 'beginTurn' },
              },
            },
            turn: {
              initial: 'cacheFlux',
              after: {
                turnBudget: { guard: 'noChunkSent', target: 'sos', actions: [{ type: 'setSosReason', params: 'budget' }] },
                replyMax: { target: 'sos', actions: [{ type: 'setSosReason', params: 'stall' }] },
              },
              on: {
                // The senior spoke again: barge-in on the running reply, then answer the new turn.
                TURN: { target: 'turn', reenter: true, actions: ['interruptCurrent', 'beginTurn'] },
                INTERRUPT: { guard: 'isCurrentTurn', target: 'idle', actions: 'interruptCurrent' },
                'SOCKET.LOST': { target: 'idle', actions: 'interruptCurrent' },
              },
              states: {
                // A new turn while one runs (barge-in) enters here; between turns, `idle` asks CacheFlux itself.
                cacheFlux: {
                  // Synchronous and in memory (sub-millisecond): resolved on entry, no actor spawned.
                  entry: 'resolveCacheFlux',
                  always: [
                    {
                      guard: 'cacheHit',
                      target: '#kohamiSession.live.conversation.answered',
                      actions: [{ type: 'finishTurn', params: ({ context }) => ({ text: context.current!.cacheReply!, flux: 'cache' as const }) }],
                    },
                    { target: 'recall' },
                  ],
                },
                recall: {
                  invoke: {
                    src: 'recall',
                    input: ({ context }) => ({ seniorId: context.seniorId, transcript: context.current!.transcript }),
                    onDone: [
                      {
                        guard: ({ event }) => event.output.kind === 'reply',
                        target: '#kohamiSession.live.conversation.answered',
                        actions: [
                          {
                            type: 'finishTurn',
                            params: ({ event }) => (event.output.kind === 'reply' ? { text: event.output.text, flux: event.output.flux } : { text: '', flux: 'recall' as const }),
                          },
                        ],
                      },
                      {
                        target: 'semanticCache',
                        actions: [{ type: 'setFacts', params: ({ event }) => (event.output.kind === 'facts' ? event.output.facts : []) }],
                      },
                    ],
                    // A failing recall never blocks the turn: the agent answers without facts.
                    onError: { target: 'semanticCache' },
                  },
                },
                semanticCache: {
                  invoke: {
                    src: 'semanticCache',
                    input: ({ context }) => ({
                      seniorId: context.seniorId,
                      question: context.current!.transcript,
                      previous: previousExchange(context.window),
                      promptVersion: promptVersion(context.profile.persona),
                    }),
                    onDone: [
                      {
                        guard: ({ event }) => event.output.kind === 'hit',
                        target: '#kohamiSession.live.conversation.answered',
                        actions: [
                          {
                            type: 'finishTurn',
                            params: ({ event }) => ({ text: event.output.kind === 'hit' ? event.output.reply : '', flux: 'semantic_cache' as const }),
                          },
                        ],
                      },
                      { target: 'agentAdmission', actions: [{ type: 'setCacheTicket', params: ({ event }) => ({ ticket: event.output.kind === 'miss' ? event.output.ticket : null }) }] },
                    ],
                    // The cache is an optimisation: whatever happens to it, the agent answers.
                    onError: { target: 'agentAdmission' },
                  },
                },
                // While the provider's Retry-After lasts, the agent is called only if the wait leaves its call time within the budget.
                agentAdmission: {
                  always: [
                    { guard: 'agentPausedPastBudget', target: '#kohamiSession.live.conversation.sos', actions: [{ type: 'setSosReason', params: 'rate_limited' }] },
                    { target: 'agent' },
                  ],
                },
                agent: {
                  initial: 'waiting',
                  states: {
                    // Before the first chunk the turn budget applies; after it, each gap between chunks is bounded.
                    waiting: {
                      on: { 'AGENT.CHUNK': { target: 'streaming', actions: ['appendChunk', 'emitDelta'] } },
                    },
                    // A chunk only notes its time: the stall timer is not re-armed per chunk but, when it
                    // fires after chunks came, for what is left of the bound after the latest.
                    streaming: {
                      entry: 'armStall',
                      on: { 'AGENT.CHUNK': { actions: ['appendChunk', 'emitDelta'] } },
                      after: {
                        agentStall: [
                          { guard: 'chunkSinceStallArmed', target: 'streaming', reenter: true },
                          { target: '#kohamiSession.live.conversation.sos', actions: [{ type: 'setSosReason', params: 'stall' }] },
                        ],
                      },
                    },
                  },
                  invoke: {
                    src: 'agentReply',
                    input: ({ context }) => ({
                      seniorId: context.seniorId,
                      profile: context.profile,
                      window: context.window,
                      facts: context.current!.facts,
                      runningSummary: context.runningSummary,
                    }),
                    onError: { target: '#kohamiSession.live.conversation.sos', actions: [{ type: 'setSosReason', params: 'flux_error' }] },
                  },
                  on: {
                    'AGENT.TOOL': { actions: 'markToolUse' },
                    'AGENT.DONE': [
                      { guard: 'emptyReply', target: '#kohamiSession.live.conversation.sos', actions: [{ type: 'setSosReason', params: 'empty_reply' }] },
                      {
                        target: '#kohamiSession.live.conversation.answered',
                        // `recall` when recalled facts were in the agent's context, so operators see memory at work.
                        actions: [
                          {
                            type: 'finishTurn',
                            params: ({ context }) => ({
                              text: context.current!.reply,
                              flux: context.current!.facts.length > 0 ? ('recall' as const) : ('agent' as const),
                              cacheTicket: context.current!.usedTools ? null : context.current!.cacheTicket,
                            }),
                          },
                        ],
                      },
                    ],
                    'AGENT.FAILED': [
                      { guard: 'throttled', target: '#kohamiSession.live.conversation.sos', actions: [{ type: 'setSosReason', params: 'rate_limited' }] },
                      { guard: 'canRetry', target: 'agent', reenter: true, actions: 'countRetry' },
                      { target: '#kohamiSession.live.conversation.sos', actions: [{ type: 'setSosReason', params: 'model_error' }] },
                    ],
                  },
                },
              },
            },
            answered: { always: 'idle' },
            sos: {
              entry: 'finishWithSos',
              always: 'idle',
            },
          },
        },
      },
    },
    closed: {
      type: 'final',
      entry: ['endCurrentOnShutdown', 'interruptCurrent', 'emitSessionClosed'],
    },
  },
});

export type SessionActor = ActorRefFrom<typeof sessionMachine>;

/**
 * The session is between turns: live, no turn running, its window not being folded. The preemptive
 * turn starts only from such a snapshot — a copy of the session restored from it and given the
 * interim transcript as a `TURN`, the same event a kiosk's turn is — so the copy asks exactly what the
 * real turn will (a turn running, or a fold, would change the window the model is asked about).
 */
export function betweenTurns(snapshot: ReturnType<SessionActor['getSnapshot']>): boolean {
  return snapshot.status === 'active' && snapshot.matches({ live: { conversation: 'idle', memory: 'steady' } });
}
