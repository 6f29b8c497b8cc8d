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

/**
 * An answer's place in the document: the document (its id), the words naming the answer in a
 * problem, and its response object; undefined when the route is not in the document.
 */
function lookUp(app: FastifyInstance, answer: { method: string; route: string; status: number }): { id: string; doc: Doc; where: string; resolved: ReturnType<typeof resolveResponse> } | undefined {
  const method = answer.method.toLowerCase();
  const path = documentPath(answer.route);
  const found = documentFor(app, path, method);
  if (!found) return undefined;
  return { id: found.id, doc: found.doc, where: `${answer.method} ${path} ${answer.status}`, resolved: resolveResponse(found.doc, path, method, answer.status) };
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
  const looked = lookUp(app, answer);
  if (!looked) return [];
  const { id, doc, where, resolved } = looked;
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

/** The media types whose bodies are sequences: each item is checked against the media type's `x-item-schema`. */
const STREAM_TYPES = new Set(['application/x-ndjson', 'text/event-stream']);
/** A stream's bytes kept for the check: a full-range scan's is 13 MB; past this, the lines kept are checked. */
const STREAM_CAPTURE_MAX_BYTES = 16 * 1024 * 1024;

function compiled(id: string, pointer: string): ValidateFunction {
  const key = `${id} ${pointer}`;
  let validate = validators.get(key);
  if (!validate) {
    validate = ajv.compile({ $ref: `${id}#${pointer}` });
    validators.set(key, validate);
  }
  return validate;
}

/** The events of an SSE text (the WHATWG parser's rules, for what this server writes): those with data. */
export function sseEvents(text: string): { id?: string; event: string; data: string }[] {
  const events: { id?: string; event: string; data: string }[] = [];
  for (const block of text.split('\n\n')) {
    const event: { id?: string; event: string; data?: string } = { event: 'message' };
    for (const line of block.split('\n')) {
      if (line === '' || line.startsWith(':')) continue;
      const colon = line.indexOf(':');
      const field = colon < 0 ? line : line.slice(0, colon);
      const value = colon < 0 ? '' : line.slice(colon + 1).replace(/^ /, '');
      if (field === 'data') event.data = event.data === undefined ? value : `${event.data}\n${value}`;
      else if (field === 'event') event.event = value;
      else if (field === 'id') event.id = value;
    }
    if (event.data !== undefined) events.push(event as { id?: string; event: string; data: string });
  }
  return events;
}

/**
 * What is wrong with a streamed answer's body by the document: each NDJSON line, each SSE event
 * (and the JSON its `data` carries, by the event schema's `contentSchema`) against the media
 * type's `x-item-schema`. `complete` is false when the text was cut (the client left, the capture
 * is full): its last, partial item is not judged.
 */
export function streamProblems(app: FastifyInstance, answer: { method: string; route: string; status: number; contentType: string; text: string; complete: boolean }): string[] {
  const looked = lookUp(app, answer);
  if (!looked) return [];
  const { id, where, resolved } = looked;
  const type = answer.contentType.split(';', 1)[0]!.trim().toLowerCase();
  const media = resolved?.response.content?.[type] as { 'x-item-schema'?: { properties?: { data?: { contentSchema?: unknown } } } } | undefined;
  if (!resolved || !media) return [`${where}: streamed ${type}, which the document does not give this response`];
  if (!media['x-item-schema']) return [`${where}: ${type} has no x-item-schema to check its items by`];
  const itemPointer = `${resolved.pointer}/content/${escape(type)}/x-item-schema`;
  const validate = compiled(id, itemPointer);
  const problems: string[] = [];
  const judge = (v: ValidateFunction, value: unknown, what: string): void => {
    if (!v(value)) problems.push(`${where}: ${what} does not match the document: ${ajv.errorsText(v.errors)}\n  ${JSON.stringify(value).slice(0, 500)}`);
  };
  let text = answer.text;
  if (!answer.complete) text = text.slice(0, text.lastIndexOf(type === 'text/event-stream' ? '\n\n' : '\n') + 1);
  if (type === 'application/x-ndjson') {
    if (text !== '' && !text.endsWith('\n')) problems.push(`${where}: the NDJSON text does not end with a newline`);
    for (const [i, line] of text.split('\n').slice(0, -1).entries()) {
      try {
        judge(validate, JSON.parse(line), `line ${i + 1}`);
      } catch {
        problems.push(`${where}: line ${i + 1} is not JSON: ${line.slice(0, 200)}`);
      }
    }
  } else {
    const data = media['x-item-schema'].properties?.data?.contentSchema ? compiled(id, `${itemPointer}/properties/data/contentSchema`) : undefined;
    for (const [i, event] of sseEvents(text).entries()) {
      judge(validate, event, `event ${i + 1}`);
      if (!data) continue;
      try {
        judge(data, JSON.parse(event.data), `event ${i + 1}'s data`);
      } catch {
        problems.push(`${where}: event ${i + 1}'s data is not JSON: ${event.data.slice(0, 200)}`);
      }
    }
  }
  return problems;
}

/**
 * Streams are written to the socket by hand (Fastify's onSend never sees them): their head and
 * bytes are taken as they are written, and judged when the answer ends.
 */
function watchStreams(app: FastifyInstance, problems: string[], opts: { rateLimited?: boolean }): void {
  app.addHook('onRequest', async (request, reply) => {
    const route = request.routeOptions.url;
    if (route === undefined || !route.startsWith('/api/')) return;
    const res = reply.raw;
    const chunks: Buffer[] = [];
    let size = 0;
    let complete = true;
    let head: { status: number; contentType: string; headers: Set<string> } | undefined;
    const writeHead = res.writeHead.bind(res) as (...args: unknown[]) => typeof res;
    res.writeHead = ((status: number, ...rest: unknown[]) => {
      const given = rest.find((r) => typeof r === 'object' && r !== null) as Record<string, unknown> | undefined;
      const headers = new Set([...Object.keys(res.getHeaders()), ...Object.keys(given ?? {})].map((h) => h.toLowerCase()));
      const contentType = String(given?.['content-type'] ?? res.getHeader('content-type') ?? '');
      if (STREAM_TYPES.has(contentType.split(';', 1)[0]!.trim().toLowerCase())) head = { status, contentType, headers };
      return writeHead(status, ...rest);
    }) as typeof res.writeHead;
    const keep = (chunk: unknown): void => {
      if (!head || !complete || chunk === undefined || chunk === null || typeof chunk === 'function') return;
      const buf = typeof chunk === 'string' ? Buffer.from(chunk) : Buffer.from(chunk as Uint8Array);
      // Full: what was kept is a prefix of the stream, and only its whole items are judged.
      if (size + buf.length > STREAM_CAPTURE_MAX_BYTES) complete = false;
      else {
        chunks.push(buf);
        size += buf.length;
      }
    };
    const write = res.write.bind(res) as (...args: unknown[]) => boolean;
    res.write = ((chunk: unknown, ...rest: unknown[]) => {
      keep(chunk);
      return write(chunk, ...rest);
    }) as typeof res.write;
    const end = res.end.bind(res) as (...args: unknown[]) => typeof res;
    res.end = ((chunk?: unknown, ...rest: unknown[]) => {
      keep(chunk);
      return end(chunk, ...rest);
    }) as typeof res.end;
    res.once('close', () => {
      if (!head) return;
      const answer = { method: request.method, route, status: head.status, contentType: head.contentType };
      problems.push(...contractProblems(app, { ...answer, headers: new Set(head.headers), hasBody: false }, opts));
      problems.push(...streamProblems(app, { ...answer, text: Buffer.concat(chunks).toString('utf8'), complete: complete && res.writableFinished }));
    });
  });
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
  watchStreams(app, problems, opts);
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
