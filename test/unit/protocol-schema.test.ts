import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { AUDIO_FRAME_VERSION, MAX_TURN_ID_BYTES } from '../../runtime/protocol/frame-header.ts';
import { PROTOCOL_SCHEMA_PATH, protocolJsonSchemaText } from '../../runtime/protocol/json-schema.ts';
import { CLIENT_FRAME_TYPES, ClientFrameSchema } from '../../runtime/protocol/messages.ts';
import { SERVER_FRAME_SCHEMAS, ServerFrameSchema } from '../../runtime/protocol/server-frames.ts';
import { checkedInSchema, jsonSchemaValidator, zodProblem, type Direction } from '../support/protocol-schema.ts';

const SERVER_FRAME_TYPES = Object.keys(SERVER_FRAME_SCHEMAS);
const ref = (id: string) => ({ $ref: `#/$defs/${id}` });

/** The `type` constant of a frame's definition, for each of its branches (session.start has two). */
function typeConstants(def: Record<string, unknown>): unknown[] {
  const branches = (def.anyOf ?? def.oneOf ?? [def]) as Array<{ properties?: { type?: { const?: unknown } }; required?: string[] }>;
  return branches.map((b) => (b.required?.includes('type') ? b.properties?.type?.const : undefined));
}

/** Every one-line frame of the kiosk protocol's example exchanges in docs/protocol.md, with its direction. */
function documentedFrames(): Array<{ direction: Direction; frame: Record<string, unknown> }> {
  const doc = readFileSync(new URL('../../docs/protocol.md', import.meta.url), 'utf8');
  // The operator stream's examples follow the kiosk protocol's and are not kiosk frames.
  const kiosk = doc.slice(0, doc.indexOf('# Operator stream'));
  return [...kiosk.matchAll(/^([←→]) (\{.*\})$/gm)].map((m) => ({ direction: m[1] === '→' ? 'clientFrame' : 'serverFrame', frame: JSON.parse(m[2]!) }));
}

describe('docs/protocol.schema.json', () => {
  it('is what `npm run protocol:schema` generates from the zod schemas', () => {
    const checkedIn = readFileSync(new URL(`../../${PROTOCOL_SCHEMA_PATH}`, import.meta.url), 'utf8');
    expect(checkedIn === protocolJsonSchemaText(), `${PROTOCOL_SCHEMA_PATH} differs from the protocol's zod schemas (runtime/protocol/): run \`npm run protocol:schema\` and commit the result`).toBe(true);
  });

  it('is draft 2020-12 with one definition per frame type, named by its type, and the two unions over them', () => {
    const schema = checkedInSchema();
    expect(schema.$schema).toBe('https://json-schema.org/draft/2020-12/schema');
    expect(Object.keys(schema.$defs).sort()).toEqual(['clientFrame', 'serverFrame', ...CLIENT_FRAME_TYPES, ...SERVER_FRAME_TYPES].sort());
    expect(schema.$defs.clientFrame!.oneOf).toEqual(CLIENT_FRAME_TYPES.map(ref));
    expect(schema.$defs.serverFrame!.oneOf).toEqual(SERVER_FRAME_TYPES.map(ref));
    expect(schema.anyOf).toEqual([ref('clientFrame'), ref('serverFrame')]);
    for (const type of [...CLIENT_FRAME_TYPES, ...SERVER_FRAME_TYPES]) {
      const constants = typeConstants(schema.$defs[type]!);
      expect(constants.length, type).toBeGreaterThan(0);
      for (const constant of constants) expect(constant, type).toBe(type);
      expect(schema.$defs[type]!.description, type).toEqual(expect.any(String));
    }
  });

  it('describes the binary audio frames, which are not JSON, in its $comment', () => {
    const { $comment } = checkedInSchema();
    expect($comment).toContain(`[u8 version = ${AUDIO_FRAME_VERSION}][u8 n = turnId's UTF-8 byte length, 1–${MAX_TURN_ID_BYTES}][n bytes turnId, UTF-8][u32 little-endian sampleOffset`);
    expect($comment).toContain('pcm_s16le mono at 16000 Hz, 10–200 ms a frame (an even number of bytes from 320 to 6400)');
  });

  it('server frames carry exactly their fields; client frames may carry more (the gateway ignores them)', () => {
    const server = jsonSchemaValidator('serverFrame');
    const client = jsonSchemaValidator('clientFrame');
    expect(server({ type: 'pong' })).toBeNull();
    expect(server({ type: 'pong', extra: 1 })).toMatch(/not a valid serverFrame/);
    expect(ServerFrameSchema.safeParse({ type: 'pong', extra: 1 }).success).toBe(false);
    expect(server({ type: 'reply.done', turnId: 't1', text: 'Bonjour', flux: 'model', latencyMs: 3 })).toMatch(/not a valid serverFrame/);
    expect(server({ type: 'ping' })).toMatch(/not a valid serverFrame/);
    expect(client({ type: 'ping', extra: 1 })).toBeNull();
    expect(ClientFrameSchema.safeParse({ type: 'ping', extra: 1 }).success).toBe(true);
    expect(client({ type: 'session.start', mode: 'voice' })).toMatch(/not a valid clientFrame/);
    expect(client({ type: 'turn', turnId: '', transcript: 'Bonjour' })).toMatch(/not a valid clientFrame/);
  });

  it('every frame of the documented example exchanges is valid, by the JSON Schema and by the zod schemas', () => {
    const frames = documentedFrames();
    expect(frames.filter((f) => f.direction === 'clientFrame').length).toBeGreaterThan(5);
    expect(frames.filter((f) => f.direction === 'serverFrame').length).toBeGreaterThan(20);
    const validate = { clientFrame: jsonSchemaValidator('clientFrame'), serverFrame: jsonSchemaValidator('serverFrame') };
    const zod = { clientFrame: ClientFrameSchema, serverFrame: ServerFrameSchema };
    for (const { direction, frame } of frames) {
      expect(zodProblem(zod[direction], frame)).toBeNull();
      expect(validate[direction](frame)).toBeNull();
    }
  });
});
