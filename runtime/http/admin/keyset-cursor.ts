import { z } from 'zod';

/** A keyset position: the last row's exact (microsecond, UTC) time and its id, the tie-breaker. */
export interface KeysetPosition {
  at: string;
  id: string;
}

/** Opaque to clients: base64url of `[at, id]`. */
export const encodeCursor = (p: KeysetPosition) => Buffer.from(JSON.stringify([p.at, p.id])).toString('base64url');

/** Postgres and ISO 8601 both spell years 0001 to 9999 without a sign or an era; beyond, a date is refused by name. */
export const storableYear = (d: Date) => d.getUTCFullYear() >= 1 && d.getUTCFullYear() <= 9999;

/** A cursor this API returns is about 90 characters: anything much longer is not one. */
const MAX_CURSOR_CHARS = 256;
const notOurCursor = 'cursor is not one this API returned (pass nextCursor as is)';

/** The `cursor` query parameter of a keyset-paginated route: a bad one is a 400 that says so. */
export const CursorParam = z
  .string()
  .max(MAX_CURSOR_CHARS, notOurCursor)
  .transform((raw, ctx) => {
    try {
      const [at, id] = JSON.parse(Buffer.from(raw, 'base64url').toString('utf8')) as unknown[];
      if (z.iso.datetime().safeParse(at).success && storableYear(new Date(at as string)) && z.uuid().safeParse(id).success) return { at, id } as KeysetPosition;
    } catch {
      // falls through to the issue below
    }
    ctx.addIssue({ code: 'custom', message: notOurCursor });
    return z.NEVER;
  })
  .optional();

const limitMessage = 'limit must be an integer from 1 to 200';
/** The `limit` query parameter: 1 to 200, 50 by default. */
export const LimitParam = z.coerce.number({ message: limitMessage }).int(limitMessage).min(1, limitMessage).max(200, limitMessage).default(50);
