import { Type, type TSchema } from 'typebox';

/** A host as a request names it: a DNS name is at most 253 characters, an address with a zone id far less. */
export const HOST_INPUT_MAX_CHARS = 255;

/** The success envelope around a tool's data. */
export function envelope<T extends TSchema>(data: T) {
  return Type.Object({ success: Type.Literal(true), data, message: Type.String() });
}

/**
 * Response schemas for a route: its 200 envelope. The error statuses every route of its kind
 * answers are added as it is registered (src/http/error-responses.ts); a route adds those only
 * it answers (a 409) with errorResponse().
 */
export function responses<T extends TSchema>(data: T) {
  return { 200: envelope(data) } as const;
}

export const Nullable = <T extends TSchema>(schema: T) => Type.Union([schema, Type.Null()]);

/** A POST that needs nothing sent: no body, or an empty JSON object. */
export const NoBody = Type.Union([Type.Object({}), Type.Null()], { description: 'none needed: send no body, or {}' });
