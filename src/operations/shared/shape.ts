import type { Static, TSchema } from 'typebox';

/**
 * A compile-time check that a result schema describes the domain's result type, written once in
 * each operation's schema.ts:
 *
 *   type _Described = Assert<Describes<typeof DnsLookupResult, DomainDnsLookupResult>>;
 *
 * Both directions that matter for what goes out:
 * - the domain's type is assignable to the schema's (Static<S>): every field the schema requires
 *   is there, of a type it admits (an operation's `run` is held to this too);
 * - the two name the same fields at every depth (objects, arrays' items, every member of a
 *   union): a field the domain adds and the schema does not name would be dropped without a word
 *   by the serializer, and a field only the schema names would never be filled.
 * The domain's types may be narrower than the schema's (`status: DnsStatus` where the schema says
 * a string; the records as a union by type where the schema has one object): those narrower types
 * are the domain's own business, and the document is the schema's.
 *
 * On a mismatch the check is not `true` but a sentence naming the field, which the compiler
 * prints: `Type '"records.foo: in the domain only (the serializer drops it)"' does not satisfy
 * the constraint 'true'`.
 */
export type Assert<T extends true> = T;

export type Describes<S extends TSchema, D> = [Difference<Static<S>, D, ''>] extends [never]
  ? [D] extends [Static<S>]
    ? true
    : 'the domain type is not assignable to the schema type'
  : Difference<Static<S>, D, ''>;

type Elements<T> = T extends readonly (infer E)[] ? Elements<E> : T;
/** The object types a value may be, through arrays and null. */
type Objects<T> = Extract<Elements<NonNullable<T>>, object>;
/** Every key of every member of a union. */
type KeysOf<T> = T extends unknown ? keyof T & string : never;
/** The type of `K` in every member of a union that has it. */
type At<T, K extends string> = T extends unknown ? (K extends keyof T ? T[K] : never) : never;
type Named<K, P extends string, M extends string> = K extends string ? `${P}${K}: ${M}` : never;

/** Sentences naming each field where the schema's type S and the domain's D differ; never when none does. */
type Difference<S, D, P extends string> = [Objects<S>] extends [never]
  ? [Objects<D>] extends [never]
    ? never
    : `${P}: an object in the domain only`
  : [Objects<D>] extends [never]
    ? `${P}: an object in the schema only`
    : FieldsDifference<Objects<S>, Objects<D>, P>;

type FieldsDifference<S, D, P extends string> =
  | Named<Exclude<KeysOf<S>, KeysOf<D>>, P, 'in the schema only (never filled)'>
  | Named<Exclude<KeysOf<D>, KeysOf<S>>, P, 'in the domain only (the serializer drops it)'>
  | { [K in KeysOf<S> & KeysOf<D>]: Difference<At<S, K>, At<D, K>, `${P}${K}.`> }[KeysOf<S> & KeysOf<D>];
