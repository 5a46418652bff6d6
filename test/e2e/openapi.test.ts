import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { generateToken } from '../../adapters/postgres/tokens.ts';
import type { ApiRole } from '../../adapters/postgres/senior-directory.ts';
import { startTestRuntime, type TestRuntime } from '../support/runtime.ts';

/**
 * The OpenAPI document at /docs/json, walked operation by operation: each has its family's tag and a
 * description; each one a token guards lists the bearer scheme, its 401 and 403, and the roles it
 * admits — and the real runtime answers exactly that: 401 without a token, 403 to every other role.
 */

interface Operation {
  tags?: string[];
  description?: string;
  security?: Array<Record<string, string[]>>;
  responses: Record<string, unknown>;
  'x-roles'?: ApiRole[];
}
interface Spec {
  tags: Array<{ name: string; description: string }>;
  components: { securitySchemes: Record<string, { type: string; scheme: string }> };
  paths: Record<string, Record<string, Operation>>;
}

const ROLES: ApiRole[] = ['admin', 'operator', 'caregiver'];
/** The operations anyone may call: the probes. */
const OPEN = ['/health', '/ready'];

let rt: TestRuntime;
let spec: Spec;
const tokens = new Map<ApiRole, string>();
beforeAll(async () => {
  rt = await startTestRuntime({ apiDocs: true });
  spec = (await (await fetch(`${rt.url}/docs/json`)).json()) as Spec;
  for (const role of ROLES) {
    const token = generateToken(role);
    await rt.directory.addApiToken(role, token, `openapi test ${role}`);
    tokens.set(role, token);
  }
}, 60_000);
afterAll(async () => {
  await rt?.close();
});

const operations = () => Object.entries(spec.paths).flatMap(([path, ops]) => Object.entries(ops).map(([method, op]) => ({ path, method, op })));
/** A request on the operation's path, its parameters filled in (the role check runs before they are validated). */
const call = (path: string, method: string, token: string | null) =>
  fetch(`${rt.url}${path.replace(/\{(id|seniorId)\}/g, '00000000-0000-4000-8000-000000000000').replace('{category}', 'sante')}`, {
    method: method.toUpperCase(),
    headers: token ? { authorization: `Bearer ${token}` } : {},
  });

describe('the OpenAPI document', () => {
  it('declares the bearer scheme and the route families', () => {
    expect(Object.values(spec.components.securitySchemes)).toEqual([expect.objectContaining({ type: 'http', scheme: 'bearer' })]);
    expect(spec.tags.length).toBeGreaterThan(1);
    for (const tag of spec.tags) expect(tag.description, tag.name).toBeTruthy();
    // Every family declared has operations, and every operation one declared family.
    const used = new Set(operations().flatMap(({ op }) => op.tags ?? []));
    expect([...used].sort()).toEqual(spec.tags.map((t) => t.name).sort());
  });

  it('every operation: one tag, a description; a guarded one: bearer, 401, 403 and its roles', () => {
    expect(operations().length).toBeGreaterThanOrEqual(23);
    for (const { path, method, op } of operations()) {
      const name = `${method.toUpperCase()} ${path}`;
      expect(op.tags, name).toHaveLength(1);
      // Its own words, without the roles the transform appends to every guarded operation's description.
      const own = (op.description ?? '').replace(/\s*Roles: [a-z, ]+\.$/, '');
      expect(own.length, `${name} has a description`).toBeGreaterThan(20);
      if (OPEN.includes(path)) {
        expect(op.security, name).toBeUndefined();
        continue;
      }
      const [scheme] = Object.keys(spec.components.securitySchemes);
      expect(op.security, name).toEqual([{ [scheme!]: [] }]);
      expect(Object.keys(op.responses), name).toEqual(expect.arrayContaining(['401', '403']));
      expect(op['x-roles']?.length, name).toBeGreaterThan(0);
    }
  });

  it('documents the caregivers’ routes under their own family, admin only', () => {
    const caregivers = operations().filter(({ path }) => path.startsWith('/v1/admin/caregivers'));
    expect(caregivers.map(({ method, path }) => `${method.toUpperCase()} ${path}`).sort()).toEqual(
      [
        'POST /v1/admin/caregivers',
        'GET /v1/admin/caregivers',
        'POST /v1/admin/caregivers/{id}/token',
        'DELETE /v1/admin/caregivers/{id}/token',
        'PUT /v1/admin/caregivers/{id}/seniors/{seniorId}',
        'DELETE /v1/admin/caregivers/{id}/seniors/{seniorId}',
      ].sort(),
    );
    for (const { op } of caregivers) {
      expect(op.tags).toEqual(['caregivers']);
      expect(op['x-roles']).toEqual(['admin']);
    }
  });

  it('the runtime answers as it says: the probes without a token, 401 without one elsewhere, 403 to the roles not listed', async () => {
    for (const { path, method, op } of operations()) {
      const name = `${method.toUpperCase()} ${path}`;
      if (OPEN.includes(path)) {
        expect((await call(path, method, null)).status, name).toBe(200);
        continue;
      }
      expect((await call(path, method, null)).status, name).toBe(401);
      expect((await call(path, method, 'admin_not_a_token_of_this_runtime')).status, name).toBe(401);
      const others = ROLES.filter((r) => !op['x-roles']!.includes(r));
      for (const role of others) expect((await call(path, method, tokens.get(role)!)).status, `${name} as ${role}`).toBe(403);
      // An admitted role passes the role check (a caregiver may still be refused a senior not linked to them: 403 there).
      for (const role of op['x-roles']!) expect((await call(path, method, tokens.get(role)!)).status, `${name} as ${role}`).not.toBe(401);
      if (op['x-roles']!.includes('admin')) expect((await call(path, method, tokens.get('admin')!)).status, `${name} as admin`).not.toBe(403);
    }
  });
});
