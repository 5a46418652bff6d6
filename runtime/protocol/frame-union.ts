import { z } from 'zod';

/** The frames of a `type` → schema map: the one source both directions' TypeScript types come from. */
export type FramesOf<M extends Record<string, z.ZodType>> = { [K in keyof M]: z.infer<M[K]> }[keyof M];

/** A map's frames as one union discriminated by `type` (`oneOf` in docs/protocol.schema.json). */
export function frameUnion<M extends Record<string, z.ZodType>>(schemas: M, description: string): z.ZodType<FramesOf<M>> {
  // Every entry is an object, or a discriminated union of objects, with a literal `type`: what the
  // parser needs; a generic map's type cannot say it.
  const options = Object.values(schemas) as unknown as [z.core.$ZodTypeDiscriminable, ...z.core.$ZodTypeDiscriminable[]];
  return z.discriminatedUnion('type', options).describe(description) as unknown as z.ZodType<FramesOf<M>>;
}
