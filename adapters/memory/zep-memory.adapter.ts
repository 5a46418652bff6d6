import { randomUUID } from 'node:crypto';
import { isFactCategory, type ConsentPort, type MemoryFact, type MemoryPort, type NewMemoryFact, type PersistedFact } from '../../machines/memory/memory.port.ts';

export class ZepNotProvisionedError extends Error {
  constructor() {
    super('Zep is not provisioned (no ZEP_API_URL): memory runs on pgvector alone');
    this.name = 'ZepNotProvisionedError';
  }
}

export class ZepHttpError extends Error {
  readonly status: number;

  constructor(
    status: number,
    operation: string,
  ) {
    super(`Zep ${operation} failed with HTTP ${status}`);
    this.status = status;
    this.name = 'ZepHttpError';
  }
}

export interface ZepSettings {
  baseUrl?: string | undefined;
  apiKey?: string | undefined;
  /** Per request; a Zep slower than this counts as a failure (the dual-write falls back). */
  timeoutMs?: number;
}

interface ZepEdge {
  uuid: string;
  fact: string;
  name: string;
}

/**
 * Zep (Graphiti) over its v2 HTTP API, the subset this runtime uses:
 * - `POST /api/v2/users` {user_id} — one Zep user per senior (created on first write);
 * - `POST /api/v2/graph/add-fact-triple` {user_id, fact, fact_name, source_node_name, target_node_name, fact_uuid}
 *   — one edge per fact; `fact_name` carries the category in capitals (e.g. `SANTE`);
 * - `POST /api/v2/graph/search` {user_id, query, limit, scope: "edges"} → {edges: [{uuid, fact, name}]};
 * - `POST /api/v2/graph/edge/user/{user_id}` → the user's edges (counted before an erasure);
 * - `DELETE /api/v2/graph/edge/{uuid}` — a fact superseded or invalidated: Zep no longer returns it;
 * - `DELETE /api/v2/users/{user_id}` — erasure of everything Zep holds for the senior.
 * Auth: `Authorization: Api-Key <key>`. Zep cannot join on our consents, so search results
 * are filtered against the senior's active consent categories here (INV-C01).
 */
export class ZepMemoryAdapter implements MemoryPort {
  private readonly timeoutMs: number;

  private readonly settings: ZepSettings;
  private readonly consents: ConsentPort;

  constructor(
    settings: ZepSettings,
    consents: ConsentPort,
  ) {
    this.settings = settings;
    this.consents = consents;
    this.timeoutMs = settings.timeoutMs ?? 2000;
  }

  get provisioned(): boolean {
    return Boolean(this.settings.baseUrl && this.settings.apiKey);
  }

  /** Zep keeps no copy check of its own: the dual-write calls this only for a fact pgvector newly stored. */
  async persist(fact: NewMemoryFact): Promise<PersistedFact> {
    if (!this.provisioned) throw new ZepNotProvisionedError();
    const id = fact.id ?? randomUUID();
    const body = {
      user_id: fact.seniorId,
      fact: fact.content,
      fact_name: fact.category.toUpperCase(),
      source_node_name: 'senior',
      target_node_name: fact.category,
      fact_uuid: id,
    };
    const res = await this.request('POST', '/api/v2/graph/add-fact-triple', body);
    if (res.status === 404) {
      await this.expectOk(await this.request('POST', '/api/v2/users', { user_id: fact.seniorId }), 'create user');
      await this.expectOk(await this.request('POST', '/api/v2/graph/add-fact-triple', body), 'add fact');
    } else {
      await this.expectOk(res, 'add fact');
    }
    if (fact.supersedes) await this.invalidate(fact.seniorId, fact.supersedes);
    return { id, seniorId: fact.seniorId, content: fact.content, category: fact.category, created: true };
  }

  /** The edge is deleted: Zep's search then never returns the superseded fact (pgvector keeps it, invalidated). */
  async invalidate(_seniorId: string, factId: string): Promise<boolean> {
    if (!this.provisioned) throw new ZepNotProvisionedError();
    const res = await this.request('DELETE', `/api/v2/graph/edge/${encodeURIComponent(factId)}`);
    if (res.status === 404) return false;
    await this.expectOk(res, 'delete edge');
    return true;
  }

  async search(query: string, seniorId: string, limit: number, signal?: AbortSignal): Promise<MemoryFact[]> {
    if (!this.provisioned) throw new ZepNotProvisionedError();
    // Over-fetch: some edges may fall to the consent filter.
    const res = await this.request('POST', '/api/v2/graph/search', { user_id: seniorId, query, limit: Math.min(50, limit * 3), scope: 'edges' }, signal);
    if (res.status === 404) return [];
    const { edges } = (await this.expectOk(res, 'search').then((r) => r.json())) as { edges?: ZepEdge[] | null };
    const active = await this.consents.activeCategories(seniorId);
    const facts: MemoryFact[] = [];
    for (const edge of edges ?? []) {
      const category = edge.name.toLowerCase();
      if (isFactCategory(category) && active.has(category)) facts.push({ id: edge.uuid, seniorId, content: edge.fact, category });
      if (facts.length === limit) break;
    }
    return facts;
  }

  /** Unprovisioned: 0, so an erasure still cascades over the other stores. */
  async deleteSenior(seniorId: string): Promise<number> {
    if (!this.provisioned) return 0;
    const list = await this.request('POST', `/api/v2/graph/edge/user/${encodeURIComponent(seniorId)}`, { limit: 10_000 });
    if (list.status === 404) return 0;
    const edges = (await this.expectOk(list, 'list edges').then((r) => r.json())) as ZepEdge[];
    const del = await this.request('DELETE', `/api/v2/users/${encodeURIComponent(seniorId)}`);
    if (del.status === 404) return 0;
    await this.expectOk(del, 'delete user');
    return edges.length;
  }

  private request(method: string, path: string, body?: unknown, signal?: AbortSignal): Promise<Response> {
    const timeout = AbortSignal.timeout(this.timeoutMs);
    return fetch(new URL(path, this.settings.baseUrl), {
      method,
      headers: { authorization: `Api-Key ${this.settings.apiKey}`, ...(body ? { 'content-type': 'application/json' } : {}) },
      ...(body ? { body: JSON.stringify(body) } : {}),
      signal: signal ? AbortSignal.any([signal, timeout]) : timeout,
    });
  }

  private async expectOk(res: Response, operation: string): Promise<Response> {
    if (!res.ok) {
      await res.body?.cancel();
      throw new ZepHttpError(res.status, operation);
    }
    return res;
  }
}
