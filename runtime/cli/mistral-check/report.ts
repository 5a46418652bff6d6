/**
 * mistral:check's report: one row per assumption the runtime makes of Mistral's service, what was
 * observed, and a verdict — `ok` (as assumed), `note` (not as documented or assumed, and the runtime
 * copes, or a setting follows from it), `break` (the runtime cannot work as configured: exit 1).
 */
export type Verdict = 'ok' | 'note' | 'break';

/** The assumptions, in the report's order. */
export const ASSUMPTIONS = {
  region: 'the host and its region',
  setup: "realtime set-up with the runtime's session.update",
  language: 'session.update with `language` (undocumented)',
  'context-bias': 'session.update with `context_bias` (undocumented)',
  'flush-answered': 'every flush is answered',
  'flush-time': 'a flush is answered within 1 s (and within STT_BUDGET_MS)',
  final: "a flush's final text is that utterance alone",
  'live-words': 'live text comes as whole words',
  'last-words': 'the last words come as live text, before the flush',
  end: '`input_audio.end` closes the socket',
  silence: 'a flush on silence is answered, with no text',
  idle: 'a socket without audio stays open',
  events: "realtime events parse with the SDK's schemas",
  'speech-pcm': 'speech as PCM: streamed float32 at 24 kHz',
  'speech-opus': 'speech as Opus: an Ogg Opus stream',
  'speech-first-packet': "speech: the first packet within the runtime's bounds (PCM 1.5 s, Opus 1.2 s)",
  voice: 'MISTRAL_TTS_VOICE is among the voices listed',
  chat: 'a streamed chat with the `search_memory` tool',
  subagent: "a sub-agent's structured answer (the cache's model check) within SEMANTIC_CACHE_VERIFY_BUDGET_MS",
  embedding: 'mistral-embed vectors are 1,024 wide',
  'retry-after': 'a 429 says when to come back (Retry-After)',
} as const;

export type RowId = keyof typeof ASSUMPTIONS;
export const ROW_IDS = Object.keys(ASSUMPTIONS) as RowId[];

export interface Row {
  id: RowId;
  assumption: string;
  observed: string;
  verdict: Verdict;
}

/** A setting the report advises: a value to set, or `null` to leave it unset. */
export interface Advice {
  name: string;
  value: string | null;
  why: string;
}

/** What the probes spent: the cost estimate's quantities. */
export interface Spent {
  audioSeconds: number;
  speechCharacters: number;
  chatInputTokens: number;
  chatOutputTokens: number;
  embeddingTokens: number;
}

/**
 * List prices (USD) the estimate assumes, the dearest of those published for the models the runtime
 * uses (Voxtral realtime transcription per minute of audio, Voxtral speech per 1,000 characters,
 * Mistral Small per million tokens in and out, mistral-embed per million tokens).
 */
export const ASSUMED_PRICES = { audioPerMinute: 0.008, speechPer1kChars: 0.016, chatInPerMTokens: 0.5, chatOutPerMTokens: 1.5, embedPerMTokens: 0.1 } as const;

export function estimatedUsd(spent: Spent): number {
  const p = ASSUMED_PRICES;
  return (
    (spent.audioSeconds / 60) * p.audioPerMinute +
    (spent.speechCharacters / 1000) * p.speechPer1kChars +
    (spent.chatInputTokens / 1e6) * p.chatInPerMTokens +
    (spent.chatOutputTokens / 1e6) * p.chatOutPerMTokens +
    (spent.embeddingTokens / 1e6) * p.embedPerMTokens
  );
}

/** The rows as they come in (probes run concurrently), read out in ASSUMPTIONS' order. */
export class Report {
  private readonly rows = new Map<RowId, Row>();
  readonly advice: Advice[] = [];
  readonly spent: Spent = { audioSeconds: 0, speechCharacters: 0, chatInputTokens: 0, chatOutputTokens: 0, embeddingTokens: 0 };
  /** Each 429 met: which call, and the wait its Retry-After asked (undefined: it named none). */
  readonly rateLimits: Array<{ call: string; retryAfterMs: number | undefined }> = [];

  set(id: RowId, verdict: Verdict, observed: string): void {
    this.rows.set(id, { id, assumption: ASSUMPTIONS[id], observed, verdict });
  }

  has(id: RowId): boolean {
    return this.rows.has(id);
  }

  advise(name: string, value: string | null, why: string): void {
    this.advice.push({ name, value, why });
  }

  /** Every row, in order; a row no probe filled is a break with `missing` as what was observed. */
  all(missing: string): Row[] {
    return ROW_IDS.map((id) => this.rows.get(id) ?? { id, assumption: ASSUMPTIONS[id], observed: missing, verdict: 'break' as const });
  }
}

export const formatMs = (n: number) => `${Math.round(n).toLocaleString('en-US')} ms`;

/** The report as text: a table, the settings to use, the cost, a last line with the counts. */
export function renderText(header: string[], rows: Row[], advice: Advice[], spent: Spent): string[] {
  const cell = (s: string) => s.replace(/\|/g, '\\|').replace(/\n/g, ' ');
  const lines = [...header, '', '| assumption | observed | verdict |', '|---|---|---|'];
  for (const row of rows) lines.push(`| ${cell(row.assumption)} | ${cell(row.observed)} | ${row.verdict} |`);
  lines.push('', 'settings to use:');
  const set = advice.filter((a) => a.value !== null);
  const unset = advice.filter((a) => a.value === null);
  if (set.length === 0) lines.push('  (none to change)');
  for (const a of set) lines.push(`  ${a.name}=${a.value}  # ${a.why}`);
  for (const a of unset) lines.push(`  leave ${a.name} unset  # ${a.why}`);
  lines.push('', costLine(spent));
  const count = (v: Verdict) => rows.filter((r) => r.verdict === v).length;
  lines.push(`result: ${count('break')} break${count('break') === 1 ? '' : 's'}, ${count('note')} note${count('note') === 1 ? '' : 's'}, ${count('ok')} ok`);
  return lines;
}

export function costLine(spent: Spent): string {
  const p = ASSUMED_PRICES;
  return (
    `cost: ${spent.audioSeconds.toFixed(1)} s of audio transcribed, ${spent.speechCharacters} characters spoken, ` +
    `${spent.chatInputTokens + spent.chatOutputTokens} chat tokens (${spent.chatInputTokens} in, ${spent.chatOutputTokens} out), ${spent.embeddingTokens} embedding tokens: ` +
    `about $${estimatedUsd(spent).toFixed(4)} at the list prices assumed ($${p.audioPerMinute}/min of audio, $${p.speechPer1kChars}/1,000 characters, ` +
    `$${p.chatInPerMTokens} and $${p.chatOutPerMTokens}/M chat tokens in and out, $${p.embedPerMTokens}/M embedding tokens)`
  );
}
