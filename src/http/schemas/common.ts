import { Type, type TSchema } from 'typebox';

/** A host as a request names it: a DNS name is at most 253 characters, an address with a zone id far less. */
export const HOST_INPUT_MAX_CHARS = 255;

/** The error envelope of API.md. */
export const ErrorBody = Type.Object(
  {
    success: Type.Literal(false),
    error: Type.String({ description: 'machine-readable code, see docs/errors.md' }),
    message: Type.String({ description: 'what went wrong, naming the field and the rule' }),
    details: Type.Optional(Type.Object({}, { additionalProperties: true })),
  },
  { $id: 'ErrorBody', title: 'Error' },
);

/** The success envelope around a tool's data. */
export function envelope<T extends TSchema>(data: T) {
  return Type.Object({ success: Type.Literal(true), data, message: Type.String() });
}

/** Response schemas for a route: its 200 envelope and the shared error body for every failure. */
export function responses<T extends TSchema>(data: T) {
  return {
    200: envelope(data),
    '4xx': Type.Ref('ErrorBody'),
    '5xx': Type.Ref('ErrorBody'),
  } as const;
}

export const Nullable = <T extends TSchema>(schema: T) => Type.Union([schema, Type.Null()]);
