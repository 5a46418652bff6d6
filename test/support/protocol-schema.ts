import { readFileSync } from 'node:fs';
import { z } from 'zod';
import { PROTOCOL_SCHEMA_PATH } from '../../runtime/protocol/json-schema.ts';

export type Direction = 'clientFrame' | 'serverFrame';

/** Why zod refuses a frame (its message names the field), or null: the zod side of each check. */
export function zodProblem(schema: z.ZodType, frame: unknown): string | null {
  const result = schema.safeParse(frame);
  return result.success ? null : `${JSON.stringify(frame)}: ${z.prettifyError(result.error)}`;
}

/** docs/protocol.schema.json as checked in (not regenerated: the tests check what device makers get). */
export function checkedInSchema(): { $schema: string; $comment: string; anyOf: unknown[]; $defs: Record<string, Record<string, unknown>> } {
  return JSON.parse(readFileSync(new URL(`../../${PROTOCOL_SCHEMA_PATH}`, import.meta.url), 'utf8'));
}

/**
 * A validator for one direction of the checked-in JSON Schema. No JSON Schema validator is a declared
 * dependency; zod reads the document back (`z.fromJSONSchema`), so a frame is checked against the
 * JSON Schema's own keywords, independently of the zod schemas it was generated from.
 */
export function jsonSchemaValidator(direction: Direction): (frame: unknown) => string | null {
  const { $schema, $defs } = checkedInSchema();
  const schema = z.fromJSONSchema({ $schema, $defs, $ref: `#/$defs/${direction}` } as Parameters<typeof z.fromJSONSchema>[0]);
  return (frame) => {
    const result = schema.safeParse(frame);
    return result.success ? null : `${JSON.stringify(frame)} is not a valid ${direction}: ${z.prettifyError(result.error)}`;
  };
}
