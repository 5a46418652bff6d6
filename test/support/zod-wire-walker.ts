import { z } from 'zod';

/**
 * Strict checks of a JSON value against a zod v4 schema of the Mistral SDK, as it travels on the wire.
 *
 * The SDK's schemas are lenient on purpose: `z.object` strips keys it does not know without a word, so a
 * parse alone never says that a message carries a field the API does not have — which is exactly how
 * Mistral refuses a request (422 `extra_forbidden`). This walks the value and the schema together and
 * reports every key the schema does not name, at any depth, with its path; then the schema's own parse
 * reports wrong types and missing fields.
 *
 * Which side of a schema is the wire depends on its direction: an `$inboundSchema` (what the SDK reads)
 * parses snake_case and remaps to camelCase, so the wire is its input; an `$outboundSchema` (what the
 * SDK writes: the request types have no other) parses camelCase and remaps to snake_case, so the wire is
 * its output. An outbound object's wire names are read from its remap transform by probing it.
 *
 * An object's `catchall` (SpeechRequest's and the transcription events' `additionalProperties`) is not
 * taken as leave to send anything: the documented contract is the fields the schema names.
 */
export type WireDirection = 'inbound' | 'outbound';
export type WirePath = Array<string | number>;

export interface WireIssue {
  path: WirePath;
  /** `extra_forbidden`: a key the schema does not name; `invalid`: refused by the schema's parse. */
  kind: 'extra_forbidden' | 'invalid';
  message: string;
  /** The offending value (for an unknown key, its value). */
  input?: unknown;
}

type Schema = z.core.$ZodType;

interface Walk {
  /** The value in the form the schema parses (outbound: keys renamed to the schema's camelCase). */
  value: unknown;
  unknown: WireIssue[];
}

interface Context {
  direction: WireDirection;
  /** The wire path of each schema-side object key met (outbound keys are renamed): parse issues are reported on the wire's names. */
  wirePaths: Map<string, WirePath>;
}

/** Every key of `value` the schema does not name, and every issue of the schema's parse, on the wire's paths. */
export function checkWire(schema: Schema, value: unknown, direction: WireDirection): WireIssue[] {
  const context: Context = { direction, wirePaths: new Map() };
  const walked = walk(schema, value, [], [], context);
  const parsed = z.safeParse(schema, walked.value);
  const invalid = parsed.success ? [] : parsed.error.issues.flatMap((issue) => parseIssues(issue, [], context, walked.value));
  return [...walked.unknown, ...invalid];
}

function walk(schema: Schema, value: unknown, path: WirePath, schemaPath: WirePath, context: Context): Walk {
  const def = (schema as z.core.$ZodTypes)._zod.def;
  switch (def.type) {
    case 'optional':
    case 'nullable':
    case 'default':
    case 'prefault':
    case 'nonoptional':
    case 'readonly':
    case 'catch':
      return value === undefined || value === null ? leaf(value) : walk(def.innerType, value, path, schemaPath, context);
    case 'lazy':
      return walk(def.getter(), value, path, schemaPath, context);
    case 'pipe':
      return walkPipe(schema, def, value, path, schemaPath, context);
    case 'object':
      return walkObject(def, value, path, schemaPath, context, null);
    case 'array':
      return Array.isArray(value) ? walkAll(value, (item, i) => walk(def.element, item, [...path, i], [...schemaPath, i], context)) : leaf(value);
    case 'record':
      return isPlainObject(value) ? walkRecord(def.valueType, value, path, schemaPath, context) : leaf(value);
    case 'union':
      return walkUnion(def.options, value, path, schemaPath, context);
    case 'intersection':
      return walkIntersection(def.left, def.right, value, path, schemaPath, context);
    default:
      // A leaf (string, number, literal, enum…): the parse judges it.
      return leaf(value);
  }
}

const leaf = (value: unknown): Walk => ({ value, unknown: [] });

/**
 * A pipe is an object and its remap (`z.object(…).transform(remap)`), a leaf and its conversion, or an
 * opaque value: the SDK's `smartUnion` and `discriminatedUnion` are `z.unknown().transform(…)` whose
 * options live in a closure no walker can reach.
 */
function walkPipe(schema: Schema, def: z.core.$ZodPipeDef, value: unknown, path: WirePath, schemaPath: WirePath, context: Context): Walk {
  const input = (def.in as z.core.$ZodTypes)._zod.def;
  if (input.type === 'unknown') return walkOpaque(schema, value, path);
  if (context.direction === 'outbound' && input.type === 'object' && (def.out as z.core.$ZodTypes)._zod.def.type === 'transform') {
    return walkObject(input, value, path, schemaPath, context, wireNames(def));
  }
  return walk(def.in, value, path, schemaPath, context);
}

/**
 * An opaque union: the value is parsed alone, and any key of it the parse's output lost was not in the
 * option that took it. Keys are compared as sent or camelCased (an inbound option renames snake_case);
 * a key an option renames otherwise would read as unknown — none of what the runtime sends or the fakes
 * answer goes through such an option (message contents, tool-call arguments, `stop`, `tool_choice`).
 */
function walkOpaque(schema: Schema, value: unknown, path: WirePath): Walk {
  const parsed = z.safeParse(schema, value);
  return { value, unknown: parsed.success ? lostKeys(value, parsed.data, path) : [] };
}

function lostKeys(sent: unknown, kept: unknown, path: WirePath): WireIssue[] {
  if (Array.isArray(sent) && Array.isArray(kept)) return sent.flatMap((item, i) => lostKeys(item, kept[i], [...path, i]));
  if (!isPlainObject(sent) || !isPlainObject(kept)) return [];
  return Object.entries(sent).flatMap(([key, item]) => {
    const name = key in kept ? key : camelCase(key);
    if (!(name in kept)) return [extra([...path, key], item)];
    return lostKeys(item, kept[name], [...path, key]);
  });
}

function walkObject(def: z.core.$ZodObjectDef, value: unknown, path: WirePath, schemaPath: WirePath, context: Context, names: Map<string, string> | null): Walk {
  if (!isPlainObject(value)) return leaf(value);
  const byWireName = new Map<string, string>();
  for (const key of Object.keys(def.shape)) {
    const wireName = names ? names.get(key) : key;
    if (wireName === undefined) continue;
    byWireName.set(wireName, key);
    context.wirePaths.set(JSON.stringify([...schemaPath, key]), [...path, wireName]);
  }
  const converted: Record<string, unknown> = {};
  const unknown: WireIssue[] = [];
  for (const [wireName, item] of Object.entries(value)) {
    const key = byWireName.get(wireName);
    if (key === undefined) {
      unknown.push(extra([...path, wireName], item));
      continue;
    }
    const walked = walk(def.shape[key]!, item, [...path, wireName], [...schemaPath, key], context);
    converted[key] = walked.value;
    unknown.push(...walked.unknown);
  }
  return { value: converted, unknown };
}

/** Each schema key's wire name, from the remap transform of an outbound object (a key it drops is absent). */
const wireNamesCache = new WeakMap<z.core.$ZodPipeDef, Map<string, string>>();
function wireNames(def: z.core.$ZodPipeDef): Map<string, string> {
  let names = wireNamesCache.get(def);
  if (names) return names;
  const shape = ((def.in as z.core.$ZodTypes)._zod.def as z.core.$ZodObjectDef).shape;
  const probe = Object.fromEntries(Object.keys(shape).map((key) => [key, { probe: key }]));
  const transform = ((def.out as z.core.$ZodTypes)._zod.def as z.core.$ZodTransformDef).transform;
  const output = transform(probe, { value: probe, issues: [] }) as Record<string, unknown>;
  names = new Map<string, string>();
  for (const [wireName, item] of Object.entries(output)) {
    const key = (item as { probe?: unknown } | null)?.probe;
    if (typeof key === 'string' && probe[key] === item) names.set(key, wireName);
  }
  wireNamesCache.set(def, names);
  return names;
}

function walkRecord(valueType: Schema, value: Record<string, unknown>, path: WirePath, schemaPath: WirePath, context: Context): Walk {
  const converted: Record<string, unknown> = {};
  const unknown: WireIssue[] = [];
  for (const [key, item] of Object.entries(value)) {
    const walked = walk(valueType, item, [...path, key], [...schemaPath, key], context);
    converted[key] = walked.value;
    unknown.push(...walked.unknown);
  }
  return { value: converted, unknown };
}

function walkAll(items: unknown[], each: (item: unknown, i: number) => Walk): Walk {
  const walked = items.map(each);
  return { value: walked.map((w) => w.value), unknown: walked.flatMap((w) => w.unknown) };
}

/** The option the value is judged by: one its parse accepts, with the fewest unknown keys (or, if none accepts it, the closest). */
function walkUnion(options: readonly Schema[], value: unknown, path: WirePath, schemaPath: WirePath, context: Context): Walk {
  let best: { walked: Walk; accepted: boolean } | undefined;
  for (const option of options) {
    const walked = walk(option, value, path, schemaPath, context);
    const accepted = z.safeParse(option, walked.value).success;
    const better = !best || (accepted && !best.accepted) || (accepted === best.accepted && walked.unknown.length < best.walked.unknown.length);
    if (better) best = { walked, accepted };
    if (accepted && walked.unknown.length === 0) break;
  }
  return best?.walked ?? leaf(value);
}

/** `A.and(B)`: a key is unknown when neither side names it (its path, or a path above it, unknown to the other side too). */
function walkIntersection(left: Schema, right: Schema, value: unknown, path: WirePath, schemaPath: WirePath, context: Context): Walk {
  const a = walk(left, value, path, schemaPath, context);
  const b = walk(right, value, path, schemaPath, context);
  const coveredBy = (issues: WireIssue[]) => (issue: WireIssue) => issues.some((other) => other.path.every((key, i) => issue.path[i] === key));
  const unknown = [...a.unknown.filter(coveredBy(b.unknown)), ...b.unknown.filter(coveredBy(a.unknown))];
  const seen = new Set<string>();
  return {
    value: isPlainObject(a.value) && isPlainObject(b.value) ? { ...b.value, ...a.value } : a.value,
    unknown: unknown.filter((issue) => {
      const key = JSON.stringify(issue.path);
      return !seen.has(key) && seen.add(key);
    }),
  };
}

/** A parse issue on the wire's path; a union refused as a whole is reported through its closest option's issues. */
function parseIssues(issue: z.core.$ZodIssue, prefix: WirePath, context: Context, root: unknown): WireIssue[] {
  const schemaPath = [...prefix, ...(issue.path as WirePath)];
  if (issue.code === 'invalid_union' && issue.errors.length > 0) {
    const closest = issue.errors.reduce((a, b) => (b.length < a.length ? b : a));
    if (closest.length > 0) return closest.flatMap((inner) => parseIssues(inner, schemaPath, context, root));
  }
  return [{ path: toWirePath(schemaPath, context), kind: 'invalid', message: issue.message, input: valueAt(root, schemaPath) }];
}

function toWirePath(schemaPath: WirePath, context: Context): WirePath {
  for (let length = schemaPath.length; length > 0; length--) {
    const wire = context.wirePaths.get(JSON.stringify(schemaPath.slice(0, length)));
    if (wire) return [...wire, ...schemaPath.slice(length)];
  }
  return schemaPath;
}

function valueAt(root: unknown, path: WirePath): unknown {
  let value = root;
  for (const key of path) value = isPlainObject(value) || Array.isArray(value) ? (value as Record<string | number, unknown>)[key] : undefined;
  return value;
}

const extra = (path: WirePath, input: unknown): WireIssue => ({ path, kind: 'extra_forbidden', message: 'Extra inputs are not permitted', input });

const camelCase = (key: string) => key.replace(/_([a-z0-9])/g, (_, c: string) => c.toUpperCase());

function isPlainObject(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}
