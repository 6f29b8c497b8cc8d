import { Type, type TAddOptional, type TProperties, type TSchema } from 'typebox';

/** A host as a request names it: a DNS name is at most 253 characters, an address with a zone id far less. */
export const HOST_INPUT_MAX_CHARS = 255;

export const Nullable = <T extends TSchema>(schema: T) => Type.Union([schema, Type.Null()]);

/** A round-trip statistic in milliseconds, null when nothing came back (`whenNull` says what that means here). */
export const NullableMs = (description: string, whenNull: string) => Nullable(Type.Number({ description: `${description}, ms (null ${whenNull})` }));

/** `fields` with every field but those of `keep` optional, in the same order. */
export type OptionalExcept<P extends TProperties, K extends keyof P> = { [F in keyof P]: F extends K ? P[F] : TAddOptional<P[F]> };

/**
 * A bulk item's fields from a single call's result fields: the entry's own (`keep`) always there,
 * the rest optional, as an entry that was refused has only the first.
 */
export function optionalExcept<P extends TProperties, K extends keyof P & string>(fields: P, keep: readonly K[]): OptionalExcept<P, K> {
  const isKept = (key: string): boolean => (keep as readonly string[]).includes(key);
  // Object.fromEntries forgets the keys; the mapped type above says what this builds.
  return Object.fromEntries(Object.entries(fields).map(([k, v]) => [k, isKept(k) ? v : Type.Optional(v)])) as OptionalExcept<P, K>;
}
