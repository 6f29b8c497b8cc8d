import { ERROR_CODES } from '../errors.js';
import { OPERATIONS } from '../operations/index.js';
import type { ExampleObject, OperationExamples } from '../operations/shared/examples.js';
import { ERROR_EXAMPLES, JOB_STREAM_EXAMPLES, ROUTE_EXAMPLES, WEBHOOK_EVENT_EXAMPLES, jobAcceptedExample, validationExample } from './examples.js';
import { API_PREFIX } from './plugins/auth.js';
import { ROUTE_ERROR_STATUSES, codesOf, errorSchemaId, type RouteErrorStatus } from './schemas/errors.js';
import { JOB_EVENT_TYPES } from './schemas/webhooks.js';
import { WEBHOOK_RETRY_AFTER_MAX_MS, WEBHOOK_SCHEDULE_TEXT, delayText } from '../domain/webhooks/delivery.js';

/**
 * What @fastify/swagger makes of the routes, completed with what holds for every route of a kind
 * (docs/api.md): the headers every answer carries, the shared error responses, the `Prefer` header of
 * every operation that can run as a job, the webhook events, the examples. Nothing here lists
 * endpoints: each rule applies to whatever routes the app declares.
 */

interface MediaObject {
  schema?: unknown;
  examples?: Record<string, ExampleObject>;
}
interface ResponseObject {
  $ref?: string;
  description?: string;
  headers?: Record<string, unknown>;
  content?: Record<string, MediaObject>;
}
interface OperationObject {
  operationId?: string;
  tags?: string[];
  parameters?: unknown[];
  requestBody?: { required?: boolean; content?: Record<string, MediaObject> };
  responses?: Record<string, ResponseObject>;
}
export interface OpenApiDocument {
  info?: { description?: string };
  tags?: { name: string; description: string }[];
  paths?: Record<string, Record<string, OperationObject>>;
  components?: Record<string, Record<string, unknown>>;
  webhooks?: Record<string, unknown>;
}

const ref = (kind: string, name: string): { $ref: string } => ({ $ref: `#/components/${kind}/${name}` });

/** Response headers, by name: a response that carries one refers to it. */
const HEADERS: Record<string, { description: string; required: boolean; schema: Record<string, unknown> }> = {
  'X-RateLimit-Limit': {
    description: 'the limit of the window that has the fewest requests remaining (ties: the shortest window)',
    required: true,
    schema: { type: 'integer' },
  },
  'X-RateLimit-Remaining': { description: "that window's remaining requests, never negative", required: true, schema: { type: 'integer', minimum: 0 } },
  'X-RateLimit-Reset': { description: "that window's end, Unix epoch seconds", required: true, schema: { type: 'integer' } },
  'RateLimit-Policy': {
    description: "the plan's three windows (requests;w=seconds), e.g. `10;w=60, 100;w=3600, 500;w=86400`",
    required: true,
    schema: { type: 'string' },
  },
  'Retry-After': { description: 'whole seconds until the request may succeed', required: true, schema: { type: 'integer', minimum: 0 } },
  'WWW-Authenticate': {
    description: 'RFC 6750: `Bearer realm="netdiag"`, with `, error="invalid_token"` when a token was sent',
    required: true,
    schema: { type: 'string' },
  },
  'X-Request-Id': { description: 'names this request in the server log: quote it when reporting a problem', required: true, schema: { type: 'string' } },
  Location: { description: 'where the job is read: `/api/jobs/{id}`', required: true, schema: { type: 'string' } },
  'Preference-Applied': { description: 'RFC 7240: the `respond-async` preference was honoured', required: true, schema: { type: 'string', const: 'respond-async' } },
  ETag: {
    description: 'the job as it stands (a stream: as it stood when the stream began): send it back in If-None-Match to be told 304 while it is unchanged',
    required: true,
    schema: { type: 'string' },
  },
};

/** What every answer of an /api route carries (docs/api.md, "Rate limits"). */
const EVERY_ANSWER = ['X-RateLimit-Limit', 'X-RateLimit-Remaining', 'X-RateLimit-Reset', 'RateLimit-Policy', 'X-Request-Id'];

/** The shared error responses: their names and what a person reads of each. */
const ERROR_RESPONSES: Record<RouteErrorStatus, { name: string; description: string; headers?: string[] }> = {
  400: { name: 'BadRequest', description: 'The request broke a rule: `message` names the field and the rule, `details.field` the field.' },
  401: { name: 'Unauthorized', description: 'No token, or a malformed, unknown, expired or revoked one.', headers: ['WWW-Authenticate'] },
  403: { name: 'Forbidden', description: "The token's account is suspended (`forbidden`), or a target resolves to a blocked range (`target_forbidden`); nothing was sent to it." },
  404: { name: 'NotFound', description: 'What the path names does not exist (or belongs to another account, or is past its time to live).' },
  409: { name: 'Conflict', description: 'The request conflicts with the state of what it names.' },
  413: { name: 'PayloadTooLarge', description: 'The body is larger than 1 MiB.' },
  415: { name: 'UnsupportedMediaType', description: 'A body sent with a `Content-Type` other than `application/json`.' },
  429: {
    name: 'TooManyRequests',
    description: "A window of the plan is used up, or its probing requests in flight are all running, or a job was read too often: `details.window` says which; this is no call.",
    headers: ['Retry-After'],
  },
  500: { name: 'InternalError', description: 'Our fault: the body carries no internals; `X-Request-Id` finds the log line.' },
  503: {
    name: 'ServiceUnavailable',
    description: 'The database cannot be reached just now, the server is shutting down, or proxy checks have no judge here; this is no call.',
    headers: ['Retry-After'],
  },
};

/** What the document says of a success response whose route left it undescribed. */
const SUCCESS_DESCRIPTIONS: Record<string, string> = {
  '200': 'Success: `data` holds the answer. A diagnosis whose answer is "it failed" (port closed, proxy dead, NXDOMAIN) is still a 200.',
};
const GENERATED_DESCRIPTION = 'Default Response';

const TAG_DESCRIPTIONS: Record<string, string> = {
  account: 'The account the token belongs to.',
  usage: "The account's calls: today's windows, a history per day, an export per day and endpoint.",
  ipv6: 'Validate, expand and compress IPv6 addresses; test reachability over IPv6.',
  dns: 'DNS lookups (one name or many) and WHOIS.',
  ip: 'Where an address is and which network holds it; security signals on request.',
  proxy: 'Is a proxy working, which protocol, how anonymous, how fast.',
  ports: 'TCP port scans: one port, a list or range, a preset.',
  path: 'The path to a host: ICMP ping, traceroute and mtr, run with the system\'s own programs.',
  checks: 'An HTTP(S) request followed through its redirects with timings; a TLS handshake and the certificate it shows.',
  jobs: 'Any POST runs as a job with `Prefer: respond-async`: read it, stream its items, cancel it.',
  webhooks: 'The signing secret of the webhooks a finished job sends (see `webhooks` of this document).',
};

/** The `Prefer` request header of every operation that can run as a job. */
const PREFER = {
  name: 'Prefer',
  in: 'header',
  required: false,
  description:
    '`respond-async` (RFC 7240) runs the call as a job: a 202 with the job at once (`Location: /api/jobs/{id}`, `Preference-Applied: respond-async`); ' +
    'validation, authentication, the target policy and rate limiting happen first, with the same errors as the synchronous call. A job may carry `webhook_url`.',
  schema: { type: 'string' },
  examples: { async: { summary: 'run as a job', value: 'respond-async' } },
};

/** The Standard Webhooks headers of every delivery. */
const WEBHOOK_HEADERS: Record<string, { name: string; description: string; example: string }> = {
  WebhookId: { name: 'webhook-id', description: 'the event: the same on every retry of it (deduplicate by it)', example: 'msg_2KWPBgLlAfxdpx2AI54pPJ85f4W' },
  WebhookTimestamp: { name: 'webhook-timestamp', description: 'Unix epoch seconds of this attempt: refuse one too far from now', example: '1795323149' },
  WebhookSignature: {
    name: 'webhook-signature',
    description:
      'space-separated `v1,<base64 HMAC-SHA256 of "{webhook-id}.{webhook-timestamp}.{body}">` entries, one per signing secret (the current one, and for 24 hours after a rotation the replaced ones: at most 3); the key is the base64 after `whsec_` of GET /api/webhooks/secret',
    example: 'v1,K5oZfzN95Z9UVu1EsfQmfVNQhnkZ2pj9o9NDN/H/pI4=',
  },
};

function headerRefs(names: readonly string[]): Record<string, { $ref: string }> {
  return Object.fromEntries(names.map((name) => [name, ref('headers', name)]));
}

/**
 * A 503's headers: a server that is shutting down refuses before the limiter is asked (so it spends
 * no budget), and so sends no rate-limit headers then; while the database is away it sends them.
 */
function unavailableHeaders(): Record<string, unknown> {
  return Object.fromEntries(
    EVERY_ANSWER.map((name) =>
      name.toLowerCase().includes('ratelimit')
        ? [name, { ...HEADERS[name], required: false, description: `${HEADERS[name]!.description} (not sent while the server is shutting down)` }]
        : [name, ref('headers', name)],
    ),
  );
}

/** The error responses every operation refers to, and the headers, parameters they use. */
function addComponents(doc: OpenApiDocument): void {
  const components = (doc.components ??= {});
  components.headers = { ...components.headers, ...HEADERS };
  components.parameters = {
    ...components.parameters,
    Prefer: PREFER,
    ...Object.fromEntries(
      Object.entries(WEBHOOK_HEADERS).map(([key, h]) => [key, { name: h.name, in: 'header', required: true, description: h.description, schema: { type: 'string' }, example: h.example }]),
    ),
  };
  components.responses = {
    ...components.responses,
    ...Object.fromEntries(
      ROUTE_ERROR_STATUSES.map((status) => {
        const { name, description, headers = [] } = ERROR_RESPONSES[status];
        return [
          name,
          {
            description: `${description} \`error\`: ${codesOf(status).map((c) => `\`${c}\``).join(', ')}.`,
            headers: { ...(status === 503 ? unavailableHeaders() : headerRefs(EVERY_ANSWER)), ...headerRefs(headers) },
            content: { 'application/json': { schema: ref('schemas', errorSchemaId(status)), examples: ERROR_EXAMPLES[status] } },
          },
        ];
      }),
    ),
  };
}

/** Is this response the plain error body of `status`, as src/http/error-responses.ts gave it? */
function isErrorResponse(status: string, response: ResponseObject): status is `${RouteErrorStatus}` {
  const schema = response.content?.['application/json']?.schema as { $ref?: string } | undefined;
  return (ROUTE_ERROR_STATUSES as readonly number[]).includes(Number(status)) && schema?.$ref === ref('schemas', errorSchemaId(Number(status) as RouteErrorStatus)).$ref;
}

/**
 * A body schema that admits `null`: the route takes no body at all (NoBody). @fastify/swagger marks
 * every body required, and a generated client or a validating proxy then refuses the call
 * without one (Prism: 422 "Body parameter is required").
 */
function admitsNoBody(schema: unknown): boolean {
  const s = schema as { type?: unknown; anyOf?: unknown[]; oneOf?: unknown[] } | undefined;
  return s?.type === 'null' || (s?.anyOf ?? s?.oneOf ?? []).some(admitsNoBody);
}

/** Each route's examples, by `METHOD /path` as in the document: every operation's own, and the other routes' (src/http/examples.ts). */
const EXAMPLES: ReadonlyMap<string, OperationExamples> = new Map([
  ...OPERATIONS.map((op) => [`POST ${API_PREFIX}${op.path}`, op.examples] as const),
  ...Object.entries(ROUTE_EXAMPLES),
]);

function completeOperation(path: string, method: string, operation: OperationObject): void {
  const examples = EXAMPLES.get(`${method.toUpperCase()} ${path}`);
  const json = operation.requestBody?.content?.['application/json'];
  if (operation.requestBody && json && admitsNoBody(json.schema)) operation.requestBody.required = false;
  if (examples?.body && json) json.examples = examples.body;
  const responses = operation.responses ?? {};
  if (responses['202']) operation.parameters = [...(operation.parameters ?? []), ref('parameters', 'Prefer')];
  for (const [status, response] of Object.entries(responses)) {
    if (isErrorResponse(status, response)) {
      const shared = ref('responses', ERROR_RESPONSES[Number(status) as RouteErrorStatus].name);
      // An operation's own 400 shows the field it names; the rest are shared.
      responses[status] =
        status === '400' && examples?.invalid
          ? {
              description: ERROR_RESPONSES[400].description,
              headers: headerRefs(EVERY_ANSWER),
              content: {
                'application/json': {
                  schema: ref('schemas', errorSchemaId(400)),
                  examples: { validation_error: validationExample(examples.invalid), ...(json ? { invalid_json: ERROR_EXAMPLES[400].invalid_json! } : {}) },
                },
              },
            }
          : shared;
      continue;
    }
    const own = Object.keys(response.headers ?? {});
    // A header the route declares is the shared one of that name, when there is one.
    const headers = { ...headerRefs(EVERY_ANSWER), ...response.headers, ...headerRefs(own.filter((name) => name in HEADERS)) };
    const description = response.description === GENERATED_DESCRIPTION ? (SUCCESS_DESCRIPTIONS[status] ?? response.description) : response.description;
    const content = response.content && Object.fromEntries(
      Object.entries(response.content).map(([type, media]) => {
        const shown = status === '202' ? jobAcceptedExample(path.slice(API_PREFIX.length)) : (examples?.ok[type] ?? JOB_STREAM_EXAMPLES[type]);
        return [type, shown ? { ...media, examples: shown } : media];
      }),
    );
    responses[status] = { ...response, description, headers, ...(content ? { content } : {}) };
  }
}

/** A receiver's Retry-After, in either of HTTP's forms (RFC 9110, 10.2.3). */
const RECEIVER_RETRY_AFTER = {
  description: `delta-seconds (\`30\`) or an HTTP-date (\`Sun, 06 Nov 1994 08:49:37 GMT\`); a wait beyond ${delayText(WEBHOOK_RETRY_AFTER_MAX_MS)} counts as ${delayText(WEBHOOK_RETRY_AFTER_MAX_MS)}`,
  schema: { type: 'string', examples: ['30', 'Sun, 06 Nov 1994 08:49:37 GMT'] },
};

/** The events a job's webhook_url receives, signed as Standard Webhooks says. */
function webhooks(): Record<string, unknown> {
  return Object.fromEntries(
    JOB_EVENT_TYPES.map((type) => [
      type,
      {
        post: {
          summary: `${type}: a job made with webhook_url has ${type.slice('job.'.length)}`,
          description:
            'POSTed to the job\'s `webhook_url` when it finishes. Verify `webhook-signature` with the account\'s secret before trusting it. ' +
            WEBHOOK_SCHEDULE_TEXT,
          tags: ['webhooks'],
          security: [],
          parameters: Object.keys(WEBHOOK_HEADERS).map((key) => ref('parameters', key)),
          requestBody: {
            required: true,
            content: { 'application/json': { schema: ref('schemas', 'WebhookEvent'), examples: { [type]: WEBHOOK_EVENT_EXAMPLES[type] } } },
          },
          responses: {
            '200': { description: 'Any 2xx: delivered, no retry.' },
            '410': { description: 'Gone: no more retries of this event.' },
            '429': { description: 'Retried, not sooner than the Retry-After sent.', headers: { 'Retry-After': RECEIVER_RETRY_AFTER } },
            '503': { description: 'Retried, not sooner than the Retry-After sent.', headers: { 'Retry-After': RECEIVER_RETRY_AFTER } },
          },
        },
      },
    ]),
  );
}

/** Error codes by status, for the document's description. */
function errorTable(): string {
  const statuses = [...new Set(Object.values(ERROR_CODES))].sort((a, b) => a - b);
  return ['| status | `error` |', '|---|---|', ...statuses.map((s) => `| ${s} | ${codesOf(s).map((c) => `\`${c}\``).join(', ')} |`)].join('\n');
}

/** Completes the generated document (@fastify/swagger's `transformObject`). */
export function completeDocument<T extends OpenApiDocument>(doc: T): T {
  addComponents(doc);
  const tags = new Set<string>();
  for (const [path, methods] of Object.entries(doc.paths ?? {})) {
    if (!path.startsWith(`${API_PREFIX}/`)) continue;
    for (const [method, operation] of Object.entries(methods)) {
      for (const tag of operation.tags ?? []) tags.add(tag);
      completeOperation(path, method, operation);
    }
  }
  doc.tags = [...tags].map((name) => ({ name, description: TAG_DESCRIPTIONS[name] ?? name }));
  doc.webhooks = webhooks();
  doc.info = {
    ...doc.info,
    description:
      `${doc.info?.description ?? ''}\n\n## Errors\n\n` +
      'Every error answers `{"success": false, "error": "<code>", "message": "...", "details": {...}}`; `message` names the field and the rule.\n\n' +
      `${errorTable()}\n\n` +
      'Errors the HTTP parser raises before routing (`bad_request`, `request_timeout`, `headers_too_large`) close the connection. ' +
      'A path that exists without the method sent is a 405 `method_not_allowed` with `Allow`; an unknown path a 404 `not_found`.',
  };
  return doc;
}
