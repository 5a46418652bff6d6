import { createWebSocketInspector } from '@statelyai/inspect';
import { createInspectorServer } from '@statelyai/inspect/server';
import { exitOnStartFailure, main } from '../main.ts';
import { inspectorRedaction } from '../ops/inspector-redaction.ts';
import { exitOnHelp } from './usage.ts';

/**
 * `npm run dev:inspect`: the runtime with every session actor, and each voice session's turn-taking
 * actor, sent to the Stately inspector through a local relay. Context and events are redacted exactly
 * as for operators (a turn-taking actor's context is not shown at all), and invoked actors' input and
 * output are hidden: the inspector shows the machines, their states and timings, never a word of the
 * conversation.
 */
exitOnHelp(`usage: npm run dev:inspect
  npm start with every session actor and turn-taking actor sent to the Stately inspector (relay on INSPECT_PORT, default 8091);
  context and events redacted, never a word of the conversation`);
const port = Number(process.env.INSPECT_PORT ?? 8091);
createInspectorServer({ port, autoOpen: false });
const inspector = createWebSocketInspector({ url: `ws://localhost:${port}`, ...inspectorRedaction });

main({ inspect: (event) => inspector.inspect.next?.(event) }, [`  Stately inspector: http://localhost:${port}  (relay for every session and turn-taking actor; context and events redacted)`]).catch(exitOnStartFailure);
