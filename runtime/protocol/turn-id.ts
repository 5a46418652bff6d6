import { z } from 'zod';
import { MAX_TURN_ID_BYTES } from './frame-header.ts';

/** `String.prototype.isWellFormed` (Node 20; not in this project's ES2022 lib). */
const isWellFormed = (s: string): boolean => (s as string & { isWellFormed(): boolean }).isWellFormed();

// A turnId also travels in every reply-audio frame's header, whose length byte caps its UTF-8 form:
// 128 UTF-16 units can be 384 UTF-8 bytes (« € »), so both limits apply, in every mode (one rule for ids).
// A lone surrogate has no UTF-8 form: encoded in that header it would become U+FFFD, and the audio
// would carry another id than the turn's, so an ill-formed id is refused.
// JSON Schema cannot say the last two rules, so the description does (docs/protocol.schema.json).
export const turnId = z
  .string()
  .min(1)
  .max(128)
  .refine(isWellFormed, { message: 'must be well-formed Unicode (no lone surrogate): it travels as UTF-8 in the reply-audio frame header' })
  .refine((id) => Buffer.byteLength(id, 'utf8') <= MAX_TURN_ID_BYTES, { message: `must be at most ${MAX_TURN_ID_BYTES} bytes in UTF-8 (the reply-audio frame header's limit)` })
  .describe(`A turn's id: 1–128 characters, at most ${MAX_TURN_ID_BYTES} bytes in UTF-8 and well-formed Unicode (no lone surrogate), as it travels in the reply-audio frame header.`);
