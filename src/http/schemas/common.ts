import { Type, type TSchema } from 'typebox';

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

/** A POST that needs nothing sent: no body, or an empty JSON object. */
export const NoBody = Type.Union([Type.Object({}), Type.Null()], { description: 'none needed: send no body, or {}' });
