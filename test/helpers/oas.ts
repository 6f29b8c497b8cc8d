import { Ajv2020 } from 'ajv/dist/2020.js';
import assert from 'node:assert/strict';
import type { FastifyInstance } from 'fastify';

/**
 * Checks a response body against the schema the published OpenAPI document gives for that
 * route and status, so the document cannot drift from what the service really answers.
 */
type OpenApiDoc = { paths: Record<string, Record<string, { responses: Record<string, unknown> }>> };
const documents = new WeakMap<FastifyInstance, OpenApiDoc>();

export async function assertMatchesOpenApi(app: FastifyInstance, method: string, path: string, status: number, body: unknown): Promise<void> {
  // Read straight from the plugin, so checking responses does not spend the client's rate limit.
  let doc = documents.get(app);
  if (!doc) {
    doc = JSON.parse(JSON.stringify(app.swagger())) as OpenApiDoc;
    documents.set(app, doc);
  }
  const operation = doc.paths[path]?.[method.toLowerCase()];
  assert.ok(operation, `the OpenAPI document has no ${method} ${path}`);
  const key = [String(status), `${String(status)[0]}XX`, `${String(status)[0]}xx`, 'default'].find((k) => k in operation.responses);
  assert.ok(key, `the OpenAPI document has no ${status} response for ${method} ${path}`);
  const ajv = new Ajv2020({ strict: false, allErrors: true, validateFormats: false });
  ajv.addSchema(doc, 'oas');
  const pointer = `oas#/paths/${path.replace(/~/g, '~0').replace(/\//g, '~1')}/${method.toLowerCase()}/responses/${key}/content/application~1json/schema`;
  const validate = ajv.compile({ $ref: pointer });
  assert.ok(validate(body), `${method} ${path} ${status} does not match the OpenAPI document: ${ajv.errorsText(validate.errors)}`);
}
