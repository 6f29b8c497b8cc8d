import { Ajv2020, type ValidateFunction } from 'ajv/dist/2020.js';
import assert from 'node:assert/strict';
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { CLIENT_GONE_STATUS } from '../../src/http/client-gone.js';

/**
 * The published OpenAPI document as the test suite's referee: every JSON answer of a documented
 * route is checked against the schema the document gives its route, method, status and media
 * type, and its required headers are looked for, so the document cannot drift from what the
 * service answers. Validators are compiled once per process for each (route, method, status,
 * media type): the document is the same for every app a test builds (an app with test-only
 * routes adds its own).
 */

interface Header {
  $ref?: string;
  required?: boolean;
}
interface Response {
  $ref?: string;
  headers?: Record<string, Header>;
  content?: Record<string, unknown>;
}
interface Doc {
  paths: Record<string, Record<string, { responses: Record<string, Response> }>>;
  components?: { responses?: Record<string, Response>; headers?: Record<string, Header> };
}

const ajv = new Ajv2020({ strict: false, allErrors: true, validateFormats: false });
/** Documents handed to Ajv, by the id it knows them by: the first app's serves nearly every test. */
const documents: { id: string; doc: Doc }[] = [];
const documentOfApp = new WeakMap<FastifyInstance, { id: string; doc: Doc }>();
const validators = new Map<string, ValidateFunction>();

/** The rate-limit headers, absent from an app built without a limiter (`limiter: null`). */
const RATE_LIMIT_HEADERS = new Set(['x-ratelimit-limit', 'x-ratelimit-remaining', 'x-ratelimit-reset', 'ratelimit-policy']);

const escape = (s: string): string => s.replace(/~/g, '~0').replace(/\//g, '~1');

/** Fastify's `/api/jobs/:id` is the document's `/api/jobs/{id}`. */
export function documentPath(routeUrl: string): string {
  return routeUrl.replace(/:(\w+)/g, '{$1}');
}

/** The document that has this operation: the process's, else this app's own (read from the plugin, spending no rate limit). */
function documentFor(app: FastifyInstance, path: string, method: string): { id: string; doc: Doc } | undefined {
  const has = (d: { doc: Doc }): boolean => d.doc.paths[path]?.[method] !== undefined;
  const known = documents.find(has);
  if (known) return known;
  let own = documentOfApp.get(app);
  if (!own) {
    own = { id: `oas${documents.length}`, doc: JSON.parse(JSON.stringify(app.swagger())) as Doc };
    ajv.addSchema(own.doc, own.id);
    documents.push(own);
    documentOfApp.set(app, own);
  }
  return has(own) ? own : undefined;
}

/** A response object and the JSON pointer of it, following a `$ref` to components/responses. */
function resolveResponse(doc: Doc, path: string, method: string, status: number): { response: Response; pointer: string } | undefined {
  const responses = doc.paths[path]![method]!.responses;
  const response = responses[String(status)];
  if (!response) return undefined;
  if (response.$ref) {
    const name = response.$ref.replace('#/components/responses/', '');
    return { response: doc.components!.responses![name]!, pointer: `/components/responses/${escape(name)}` };
  }
  return { response, pointer: `/paths/${escape(path)}/${method}/responses/${status}` };
}

export interface Answer {
  method: string;
  /** The route template, Fastify's (`/api/jobs/:id`) or the document's (`/api/jobs/{id}`). */
  route: string;
  status: number;
  /** The Content-Type sent, when there is a body. */
  contentType?: string | undefined;
  /** Header names sent, lower case. */
  headers?: ReadonlySet<string> | undefined;
  /** The JSON body, or undefined when there is none (or it is not JSON). */
  body?: unknown;
  hasBody: boolean;
}

/**
 * What is wrong with an answer by the document: an empty list when it matches, or when its route
 * is not in the document (the reference pages, the document itself, the dashboard).
 */
export function contractProblems(app: FastifyInstance, answer: Answer, opts: { rateLimited?: boolean } = {}): string[] {
  const method = answer.method.toLowerCase();
  const path = documentPath(answer.route);
  const found = documentFor(app, path, method);
  if (!found) return [];
  const { id, doc } = found;
  const where = `${answer.method} ${path} ${answer.status}`;
  const resolved = resolveResponse(doc, path, method, answer.status);
  if (!resolved) return [`${where}: the document has no ${answer.status} response for it`];
  const { response, pointer } = resolved;
  const problems: string[] = [];

  if (answer.headers) {
    for (const [name, header] of Object.entries(response.headers ?? {})) {
      const required = header.$ref ? doc.components?.headers?.[header.$ref.replace('#/components/headers/', '')]?.required : header.required;
      const lower = name.toLowerCase();
      if (!required || answer.headers.has(lower)) continue;
      if (RATE_LIMIT_HEADERS.has(lower) && opts.rateLimited === false) continue;
      problems.push(`${where}: no ${name} header, which the document says it carries`);
    }
  }

  if (!answer.hasBody) return problems;
  const type = answer.contentType?.split(';', 1)[0]!.trim().toLowerCase() ?? '';
  if (!response.content || !(type in response.content)) {
    problems.push(`${where}: answered ${type || 'a body without Content-Type'}, the document says ${Object.keys(response.content ?? {}).join(', ') || 'no body'}`);
    return problems;
  }
  if (answer.body === undefined) return problems;
  const key = `${id} ${pointer} ${type}`;
  let validate = validators.get(key);
  if (!validate) {
    validate = ajv.compile({ $ref: `${id}#${pointer}/content/${escape(type)}/schema` });
    validators.set(key, validate);
  }
  if (!validate(answer.body)) problems.push(`${where}: the body does not match the document: ${ajv.errorsText(validate.errors)}\n  body: ${JSON.stringify(answer.body).slice(0, 2000)}`);
  return problems;
}

/** The answer as a hook sees it, with its JSON body parsed. */
function answerOf(request: FastifyRequest, reply: FastifyReply, payload: unknown): Answer | undefined {
  const route = request.routeOptions.url;
  // Pages, the reference, the document itself and a test's own routes without answers declared are not what the document describes.
  const schema = request.routeOptions.schema;
  if (route === undefined || !route.startsWith('/api/') || !schema?.response || schema.hide) return undefined;
  if (request.method === 'HEAD' || reply.statusCode === CLIENT_GONE_STATUS) return undefined;
  const contentType = reply.getHeader('content-type');
  const text = typeof payload === 'string' ? payload : Buffer.isBuffer(payload) ? payload.toString('utf8') : undefined;
  const hasBody = payload !== undefined && payload !== null && payload !== '';
  let body: unknown;
  if (text !== undefined && /json/i.test(String(contentType ?? ''))) {
    try {
      body = JSON.parse(text);
    } catch {
      body = text;
    }
  }
  const headers = new Set(Object.keys(reply.getHeaders()).map((h) => h.toLowerCase()));
  return { method: request.method, route, status: reply.statusCode, contentType: contentType === undefined ? undefined : String(contentType), headers, body, hasBody };
}

/**
 * Checks every answer `app` sends against the document; a mismatch fails the test that made the
 * request when it ends (its `after`), naming the route, the status and what differs.
 * `rateLimited: false` for an app built without a limiter (no X-RateLimit-* headers).
 */
export function checkResponses(t: { after(fn: () => void): void }, app: FastifyInstance, opts: { rateLimited?: boolean } = {}): string[] {
  const problems: string[] = [];
  app.addHook('onSend', async (request, reply, payload) => {
    const answer = answerOf(request, reply, payload);
    if (answer) problems.push(...contractProblems(app, answer, opts));
    return payload;
  });
  // Checked after every other `after` hook of the test (one added while they run is run last, and
  // a failing hook stops the rest): the servers a test opened are closed whatever is found.
  // test/http/contract.test.ts runs a test file that drifts and sees it fail.
  t.after(() => t.after(() => assert.deepEqual(problems, [], `answers that do not match the OpenAPI document:\n${problems.join('\n')}`)));
  return problems;
}

/** One answer against the document, by hand (a test that has the body already). */
export async function assertMatchesOpenApi(app: FastifyInstance, method: string, route: string, status: number, body: unknown): Promise<void> {
  const method_ = method.toLowerCase();
  assert.ok(documentFor(app, documentPath(route), method_), `the OpenAPI document has no ${method} ${route}`);
  const problems = contractProblems(app, { method, route, status, contentType: 'application/json', body, hasBody: true });
  assert.deepEqual(problems, [], problems.join('\n'));
}
