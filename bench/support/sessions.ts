import { MockLanguageModelV4 } from 'ai/test';
import WebSocket from 'ws';
import { generateToken } from '../../adapters/postgres/tokens.ts';
import { CONSENT_CATEGORIES } from '../../machines/memory/memory.port.ts';
import type { Runtime } from '../../runtime/runtime.ts';

/** The sub-agents' model (mood, summaries, facts): a fixed answer per schema after `latencyMs`. */
export function subagent(latencyMs: number) {
  return new MockLanguageModelV4({
    doGenerate: async (options) => {
      if (latencyMs) await new Promise((r) => setTimeout(r, latencyMs));
      const schema = options.responseFormat?.type === 'json' ? JSON.stringify(options.responseFormat.schema) : '';
      const json = schema.includes('"score"')
        ? { score: 64 }
        : schema.includes('"summary"')
          ? { summary: 'Le senior a parlé de sa journée au jardin.' }
          : { facts: [{ content: 'Elle aime jardiner le matin.', category: 'profil', confidence: 0.9 }] };
      return {
        content: [{ type: 'text' as const, text: JSON.stringify(json) }],
        finishReason: { unified: 'stop' as const, raw: 'stop' },
        usage: { inputTokens: { total: 1, noCache: 1, cacheRead: 0, cacheWrite: 0 }, outputTokens: { total: 1, text: 1, reasoning: 0 } },
        warnings: [],
      };
    },
  });
}

export interface Kiosk {
  ws: WebSocket;
  seniorId: string;
  /** Sends a turn; resolves with its round trip in ms. */
  turn(text: string): Promise<number>;
  /** Ends the session (`session.end`), resolves at its `session.closed`, and closes the socket. */
  end(): Promise<void>;
}

/** A new senior with every consent and a kiosk token, connected over a real socket with a live session. */
export async function kiosk(rt: Runtime): Promise<Kiosk> {
  const seniorId = await rt.directory.createSenior({ displayName: 'bench', preferredName: 'Marie', onboardingDone: true });
  for (const c of CONSENT_CATEGORIES) await rt.consents.grant(seniorId, c);
  const token = generateToken('kiosk');
  await rt.directory.addDevice(seniorId, token);
  return kioskSession(rt.url, token);
}

/** The kiosk of `token` on the runtime at `url`, over a real socket, with a live session. */
export async function kioskSession(url: string, token: string): Promise<Kiosk> {
  const ws = new WebSocket(`${url.replace('http', 'ws')}/v1/kiosk?token=${token}`);
  await new Promise((r) => ws.once('open', r));
  const waiting = new Map<string, (ms: number) => void>();
  ws.on('message', (raw) => {
    const f = JSON.parse(raw.toString()) as { type: string; turnId?: string };
    if (f.type === 'reply.done') waiting.get(f.turnId!)?.(0);
    if (f.type === 'session.closed') closed?.();
  });
  let closed: (() => void) | undefined;
  ws.send(JSON.stringify({ type: 'session.start' }));
  const ready = await new Promise<{ seniorId: string }>((r) => ws.once('message', (raw) => r(JSON.parse(raw.toString()) as { seniorId: string })));
  const seniorId = ready.seniorId;
  let n = 0;
  return {
    ws,
    seniorId,
    turn: (text) =>
      new Promise((resolve) => {
        const id = `t${n++}`;
        const t0 = performance.now();
        waiting.set(id, () => {
          waiting.delete(id);
          resolve(performance.now() - t0);
        });
        ws.send(JSON.stringify({ type: 'turn', turnId: id, transcript: text }));
      }),
    end: async () => {
      await new Promise<void>((resolve) => {
        closed = resolve;
        ws.send(JSON.stringify({ type: 'session.end' }));
      });
      ws.close();
    },
  };
}

export const pct = (xs: number[], p: number) => [...xs].sort((a, b) => a - b)[Math.min(xs.length - 1, Math.floor((p / 100) * xs.length))]!;
