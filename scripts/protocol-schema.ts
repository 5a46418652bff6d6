import { writeFileSync } from 'node:fs';
import { PROTOCOL_SCHEMA_PATH, protocolJsonSchemaText } from '../runtime/protocol/json-schema.ts';
import { docComment, exitOnHelp } from '../runtime/cli/usage.ts';

exitOnHelp(() => docComment(import.meta.url));

/** `npm run protocol:schema`: writes docs/protocol.schema.json from the protocol's zod schemas (test/unit/protocol-schema.test.ts fails when it is stale). */
const target = new URL(`../${PROTOCOL_SCHEMA_PATH}`, import.meta.url);
const text = protocolJsonSchemaText();
writeFileSync(target, text);
console.log(`wrote ${PROTOCOL_SCHEMA_PATH} (${text.length} bytes)`);
