import { createHash } from 'node:crypto';
import type { Logger } from 'pino';
import type { Counter, Histogram } from 'prom-client';
import { EMBEDDING_DIMENSIONS, type MemoryEmbedderPort } from '../../machines/memory/memory.port.ts';
import type { CacheLookup, SemanticCachePort } from '../../machines/session/ports.ts';
import type { CacheVerifierPort } from '../../machines/cache/cache-verifier.port.ts';
import { guardsAgree, questionGuard, type QuestionGuard } from '../../machines/cache/near-miss-guard.ts';
import { isFollowUp } from '../../machines/cache/question-details.ts';
import { questionRefusal } from '../../machines/cache/never-cached.ts';
import { answersThePrevious } from '../../machines/cache/turn-context.ts';
import { strictKey } from '../../machines/cache/strict-key.ts';
import { normalizeQuestion } from '../../machines/french/words.ts';
import { DeadlineError, withDeadline } from '../../machines/session/deadline.ts';
import { DotMatrix } from './simd/dot-matrix.ts';

export interface SemanticCacheOptions {
  /** Serve a question whose strict key (machines/cache/strict-key.ts) equals an answered one's: the same question. */
  strict: boolean;
  /** Cosine similarity at or above which a similar question may hit; null: none (and no embedding). */
  threshold: number | null;
  /** Set: a similar question is served only when this model check confirms it within `budgetMs`. */
  verifier?: { port: CacheVerifierPort; budgetMs: number } | null;
  embedder: MemoryEmbedderPort;
  agentModelId: string;
  ttlMs: number;
  maxPerSenior: number;
  maxEntries: number;
  /** Most recent entries compared per lookup (temporal locality of conversation). */
  maxCandidates: number;
  /** Embedding the question may take this long; past it the lookup is bypassed. */
  budgetMs: number;
  metrics?: { lookups: Counter<'outcome'>; refusals?: Counter<'reason'>; bestSimilarity: Histogram<string>; verdicts?: Counter<'verdict'> };
  logger?: Pick<Logger, 'warn'>;
  now?: () => number;
}

interface Entry {
  shard: Shard;
  row: number;
  /** The strict key under its context: what a strict lookup finds it by. */
  key: string;
  question: string;
  /** Whether its row holds the question's vector; its guard with it (both unset when only strict served). */
  vector: boolean;
  /** The question's details and content words, computed once when it was asked, so a lookup only compares. */
  guard: QuestionGuard | null;
  contextKey: string;
  reply: string;
  createdAt: number;
}

/** What a miss hands the agent turn; storing it later needs no second embedding. */
interface Ticket {
  scope: string;
  seniorId: string;
  key: string;
  question: string;
  /** Null when only strict serves: no embedding was needed. */
  vector: Float32Array | null;
  guard: QuestionGuard | null;
  contextKey: string;
}

/**
 * One senior's entries under one (embedding model, agent model, prompt version): pre-normalised
 * rows of one contiguous matrix, so a lookup is one matrix–vector product (WebAssembly SIMD).
 */
class Shard {
  /** Made on the first entry with a vector: a strict-only cache never embeds. */
  matrix: DotMatrix | null = null;
  readonly entries: Array<Entry | null>;
  /** Rows, most recent first. */
  readonly recency: number[] = [];
  readonly byKey = new Map<string, Entry>();
  /** The model check's verdicts by pair (a hash of both keys): asked once, kept as long as the shard, at most `capacity`. */
  readonly verdicts = new Map<string, boolean>();

  readonly scope: string;
  readonly seniorId: string;
  readonly capacity: number;

  constructor(
    scope: string,
    seniorId: string,
    capacity: number,
  ) {
    this.scope = scope;
    this.seniorId = seniorId;
    this.capacity = capacity;
    this.entries = new Array<Entry | null>(capacity).fill(null);
  }

  remember(pair: string, same: boolean): void {
    if (this.verdicts.size >= this.capacity) this.verdicts.delete(this.verdicts.keys().next().value!);
    this.verdicts.set(pair, same);
  }

  freeRow(): number {
    return this.entries.indexOf(null);
  }
}

const hash = (text: string) => createHash('sha256').update(text).digest('base64url').slice(0, 16);

export function normalize(vector: readonly number[]): Float32Array | null {
  let norm = 0;
  for (const x of vector) norm += x * x;
  if (!(norm > 0) || vector.length !== EMBEDDING_DIMENSIONS) return null;
  const inv = 1 / Math.sqrt(norm);
  const out = new Float32Array(EMBEDDING_DIMENSIONS);
  for (let i = 0; i < EMBEDDING_DIMENSIONS; i++) out[i] = vector[i]! * inv;
  return out;
}

/**
 * The semantic cache in front of the agent (seed « Régler le cache sémantique »). RAM only:
 * replies are conversation text, so they never reach the database, a file or a log.
 * Nothing is shared between seniors, models or prompt versions; a follow-up question is keyed
 * by the exchange it follows; a candidate above the threshold must also pass the near-miss guard
 * (the same details, content words and roles); a question about health never enters it.
 */
export class SemanticCache implements SemanticCachePort {
  private readonly shards = new Map<string, Shard>();
  /** Every entry, least recently used first (a Map keeps insertion order; a use re-inserts). */
  private readonly lru = new Map<Entry, true>();
  private readonly now: () => number;

  private readonly options: SemanticCacheOptions;

  constructor(options: SemanticCacheOptions) {
    this.options = options;
    this.now = options.now ?? Date.now;
  }

  get size(): number {
    return this.lru.size;
  }

  get enabled(): boolean {
    return this.options.strict || this.options.threshold !== null;
  }

  async lookup(input: Parameters<SemanticCachePort['lookup']>[0], signal: AbortSignal): Promise<CacheLookup> {
    if (!this.enabled) return this.count('bypass', { kind: 'bypass' });
    // Kept out: neither served nor stored (no ticket).
    const refusal = questionRefusal(input.question, input.previous);
    if (refusal) {
      if (refusal !== 'follow_up_without_context') this.options.metrics?.refusals?.inc({ reason: refusal });
      return this.count('bypass', { kind: 'bypass' });
    }
    // A follow-up, and a turn that answers rather than asks (« Oui. »), are keyed by the exchange before them.
    const leans = input.previous !== null && (isFollowUp(input.question) || answersThePrevious(input.question));
    const contextKey = leans ? hash(`${normalizeQuestion(input.previous!.question)}\u0000${normalizeQuestion(input.previous!.reply)}`) : '';
    const scope = this.scope(input.seniorId, input.promptVersion);
    const key = `${contextKey}\u0000${strictKey(input.question)}`;
    const same = this.options.strict ? this.fresh(this.shards.get(scope)?.byKey.get(key)) : undefined;
    if (same) return this.served(same);
    const ticket: Ticket = { scope, seniorId: input.seniorId, key, question: input.question, vector: null, guard: null, contextKey };
    if (this.options.threshold === null) return this.count('miss', { kind: 'miss', ticket });
    try {
      const [raw] = await withDeadline((budget) => this.options.embedder.embed([input.question], budget), this.options.budgetMs, signal);
      ticket.vector = normalize(raw ?? []);
    } catch (err) {
      this.options.logger?.warn({ err, seniorId: input.seniorId }, 'semantic cache bypassed: the question could not be embedded in time');
      return this.count('bypass', { kind: 'bypass' });
    }
    if (!ticket.vector) return this.count('bypass', { kind: 'bypass' });
    ticket.guard = questionGuard(input.question);
    const found = this.best(ticket);
    if (found.similarity !== null) this.options.metrics?.bestSimilarity.observe(found.similarity);
    if (found.entry && (await this.confirmed(found.entry, ticket, input.previous, signal))) return this.served(found.entry);
    return this.count(found.refused || found.entry ? 'refused' : 'miss', { kind: 'miss', ticket });
  }

  private served(entry: Entry): CacheLookup {
    this.touch(entry);
    return this.count('hit', { kind: 'hit', reply: entry.reply });
  }

  /** An entry not past its lifetime (an expired one is dropped). */
  private fresh(entry: Entry | undefined): Entry | undefined {
    if (!entry || !this.expired(entry)) return entry;
    this.evict(entry);
    return undefined;
  }

  private expired(entry: Entry): boolean {
    return entry.createdAt < this.now() - this.options.ttlMs;
  }

  /**
   * Without a verifier, a similar question the guard lets through is served. With one, it is served only
   * when the model says so within its budget; a no, a timeout or an error is a miss. A verdict is asked
   * once per pair of keys, and kept with the senior's entries.
   */
  private async confirmed(entry: Entry, ticket: Ticket, previous: { question: string; reply: string } | null, signal: AbortSignal): Promise<boolean> {
    const verifier = this.options.verifier;
    if (!verifier) return true;
    const pair = hash(`${entry.key}\u0001${ticket.key}`);
    const known = entry.shard.verdicts.get(pair);
    if (known !== undefined) {
      this.options.metrics?.verdicts?.inc({ verdict: 'remembered' });
      return known;
    }
    let same: boolean;
    try {
      same = await withDeadline((budget) => verifier.port.sameQuestion({ cached: entry.question, asked: ticket.question, previous: ticket.contextKey ? previous : null }, budget), verifier.budgetMs, signal);
    } catch (err) {
      this.options.metrics?.verdicts?.inc({ verdict: err instanceof DeadlineError ? 'timeout' : 'error' });
      this.options.logger?.warn({ err: err instanceof DeadlineError ? undefined : err, seniorId: ticket.seniorId }, 'semantic cache: the model check gave no verdict (timeout or error), a miss');
      return false;
    }
    this.options.metrics?.verdicts?.inc({ verdict: same ? 'yes' : 'no' });
    // The entry may have been evicted while the model answered: its shard keeps the verdict only while it lives.
    entry.shard.remember(pair, same);
    return same && entry.shard.entries[entry.row] === entry;
  }

  /** Stores a completed reply under the ticket its lookup returned. */
  store(ticket: unknown, reply: string): void {
    const t = ticket as Ticket;
    if (!this.enabled || !reply.trim() || typeof t?.key !== 'string') return;
    let shard = this.shards.get(t.scope);
    if (!shard) {
      shard = new Shard(t.scope, t.seniorId, this.options.maxPerSenior);
      this.shards.set(t.scope, shard);
    }
    let row = shard.freeRow();
    if (row === -1) {
      this.evict(this.leastRecentlyUsed(shard));
      row = shard.freeRow();
    }
    if (this.lru.size >= this.options.maxEntries) this.evict(this.lru.keys().next().value!);
    // The same question answered again: the newer reply replaces the older.
    const older = shard.byKey.get(t.key);
    if (older) this.evict(older);
    if (t.vector) (shard.matrix ??= new DotMatrix(shard.capacity, EMBEDDING_DIMENSIONS)).setRow(row, t.vector);
    const entry: Entry = { shard, row, key: t.key, question: t.question, vector: t.vector !== null, guard: t.guard, contextKey: t.contextKey, reply, createdAt: this.now() };
    shard.entries[row] = entry;
    shard.byKey.set(t.key, entry);
    shard.recency.unshift(row);
    this.lru.set(entry, true);
    // An eviction above may have emptied, and so unregistered, this very shard.
    this.shards.set(t.scope, shard);
  }

  /** Drops every entry of the senior: on a consent change, an erasure. */
  invalidateSenior(seniorId: string): number {
    let dropped = 0;
    for (const [scope, shard] of this.shards) {
      if (shard.seniorId !== seniorId) continue;
      for (const entry of shard.entries) if (entry && this.lru.delete(entry)) dropped += 1;
      this.shards.delete(scope);
    }
    return dropped;
  }

  /** Drops every entry: the deployment's persona changed. */
  invalidateAll(): number {
    const dropped = this.lru.size;
    this.lru.clear();
    this.shards.clear();
    return dropped;
  }

  private scope(seniorId: string, promptVersion: string): string {
    return `${seniorId}\u0000${this.options.embedder.modelId}\u0000${this.options.agentModelId}\u0000${promptVersion}`;
  }

  private best(ticket: Ticket): { entry: Entry | null; similarity: number | null; refused: boolean } {
    const shard = this.shards.get(ticket.scope);
    if (!shard || shard.recency.length === 0) return { entry: null, similarity: null, refused: false };
    while (shard.recency.length > 0 && this.expired(shard.entries[shard.recency.at(-1)!]!)) this.evict(shard.entries[shard.recency.at(-1)!]!);
    const rows = shard.recency.filter((row) => shard.entries[row]!.vector).slice(0, this.options.maxCandidates);
    if (!shard.matrix || rows.length === 0) return { entry: null, similarity: null, refused: false };
    const scores = shard.matrix.dots(ticket.vector!, rows);
    let best = -Infinity;
    let hit: Entry | null = null;
    let refused = false;
    // The near-miss guard only looks at the few candidates above the threshold, best first.
    const above: Array<[number, Entry]> = [];
    for (let k = 0; k < rows.length; k++) {
      const score = scores[k]!;
      if (score > best) best = score;
      const entry = shard.entries[rows[k]!]!;
      if (score >= this.options.threshold! && entry.contextKey === ticket.contextKey) above.push([score, entry]);
    }
    above.sort((a, b) => b[0] - a[0]);
    for (const [, entry] of above) {
      if (guardsAgree(entry.guard!, ticket.guard!)) {
        hit = entry;
        break;
      }
      refused = true;
    }
    return { entry: hit, similarity: rows.length > 0 ? best : null, refused: refused && !hit };
  }

  private touch(entry: Entry): void {
    this.lru.delete(entry);
    this.lru.set(entry, true);
  }

  private leastRecentlyUsed(shard: Shard): Entry {
    for (const entry of this.lru.keys()) if (entry.shard === shard) return entry;
    throw new Error('a full shard has entries');
  }

  private evict(entry: Entry): void {
    this.lru.delete(entry);
    entry.shard.entries[entry.row] = null;
    if (entry.shard.byKey.get(entry.key) === entry) entry.shard.byKey.delete(entry.key);
    const i = entry.shard.recency.indexOf(entry.row);
    if (i !== -1) entry.shard.recency.splice(i, 1);
    if (entry.shard.recency.length === 0) this.shards.delete(entry.shard.scope);
  }

  private count(outcome: 'hit' | 'miss' | 'bypass' | 'refused', result: CacheLookup): CacheLookup {
    this.options.metrics?.lookups.inc({ outcome });
    return result;
  }
}
