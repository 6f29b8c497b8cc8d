/**
 * Worked examples for the OpenAPI document, declared by each operation beside its schemas
 * (src/operations/<tool>/examples.ts) and by the other routes in src/http/examples.ts: a request
 * body for every POST and an answer for every 200. They are added to the generated document
 * (src/http/openapi-document.ts), so the route schemas stay about validation, and a test checks
 * each one against its schema (test/http/openapi-examples.test.ts), so an example cannot drift
 * from what the service accepts and answers.
 *
 * Addresses and names are documentation ones (example.com, 203.0.113.0/24, 198.51.100.0/24) or
 * well-known public resolvers (8.8.8.8, 2001:4860:4860::8888).
 */

export interface ExampleObject {
  summary: string;
  value: unknown;
}

/** What one route shows: keyed by media type, then by example name. */
export interface OperationExamples {
  /** Request body examples (application/json), the first one fills the "try it out" editor. */
  body?: Record<string, ExampleObject>;
  /** The 200 answer, per media type. */
  ok: Record<string, Record<string, ExampleObject>>;
  /** The field a 400 validation_error names for this operation, and its message. */
  invalid?: { field: string; message: string };
}

/** A 200 of the JSON envelope, as one example named `success`. */
export function ok(data: unknown, message: string, summary = 'success'): Record<string, Record<string, ExampleObject>> {
  return { 'application/json': { success: { summary, value: { success: true, data, message } } } };
}

/** One example, named `example`. */
export function one(summary: string, value: unknown): Record<string, ExampleObject> {
  return { example: { summary, value } };
}
