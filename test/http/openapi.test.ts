import { Validator } from '@seriousme/openapi-schema-validator';
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { API_PREFIX } from '../../src/http/plugins/auth.js';
import { OPERATIONS } from '../../src/operations/index.js';
import { operationIdOf, toolNameOf } from '../../src/operations/names.js';
import { build } from '../helpers/build.js';
import { sseEvents, streamProblems } from '../helpers/contract.js';
import { finishedJob } from '../helpers/jobs.js';
import { httpText, rawRequest } from '../helpers/raw-http.js';
import { startListener } from '../infra/net/fixtures/connect-spy.js';

/**
 * Every route of Fastify's route tree (printRoutes) with its methods: each line is a segment
 * under the line above it at one level less, e.g. `├── api/dns/lookup (POST)` then
 * `│   └── -bulk (POST)`.
 */
function routesOf(tree: string): { path: string; methods: string[] }[] {
  const stack: string[] = [];
  const routes: { path: string; methods: string[] }[] = [];
  for (const line of tree.split('\n')) {
    const m = /^([│ ]*)[├└]── (\S+)(?: \(([^)]*)\))?/.exec(line);
    if (!m) continue;
    const depth = m[1]!.length / 4;
    stack.length = depth;
    stack.push(m[2]!);
    if (m[3]) routes.push({ path: stack.join('').replace(/\/+/g, '/'), methods: m[3].split(',').map((x) => x.trim()) });
  }
  return routes;
}

interface Operation {
  operationId?: string;
  parameters?: { $ref?: string; name?: string; in?: string }[];
  requestBody?: { content: Record<string, { schema: { properties?: Record<string, { description?: string }> } }> };
  responses: Record<string, { $ref?: string; headers?: Record<string, unknown>; content?: Record<string, { schema: unknown }> }>;
}
interface Doc {
  openapi: string;
  info: { version: string; description: string };
  paths: Record<string, Record<string, Operation>>;
  components: { responses: Record<string, unknown>; schemas: Record<string, { properties?: Record<string, { enum?: string[] }> }> };
  webhooks: Record<string, { post: Operation }>;
}

async function documentOf(url: string): Promise<Doc> {
  const res = await fetch(`${url}/api/openapi.json`);
  assert.equal(res.status, 200);
  return (await res.json()) as Doc;
}

/** The operationIds issue 26 fixed for the routes that are not POST operations of src/operations. */
const FIXED_IDS: Record<string, string> = {
  'GET /api/ip/my-ip': 'ipMyIp',
  'GET /api/user': 'getUser',
  'GET /api/usage/stats': 'usageStats',
  'GET /api/usage/history': 'usageHistory',
  'GET /api/usage/export': 'usageExport',
  'GET /api/jobs': 'listJobs',
  'GET /api/jobs/{id}': 'getJob',
  'DELETE /api/jobs/{id}': 'cancelJob',
  'POST /api/jobs/{id}/deliveries': 'redeliverJob',
  'GET /api/webhooks/secret': 'getWebhookSecret',
  'POST /api/webhooks/secret/rotate': 'rotateWebhookSecret',
};

test('/api/openapi.json is valid OpenAPI 3.1 and documents every route and method Fastify serves under /api', async (t) => {
  const { url, app } = await build(t);
  const doc = await documentOf(url);
  const result = await new Validator().validate(doc as unknown as Parameters<Validator['validate']>[0]);
  assert.equal(result.valid, true, JSON.stringify(result.errors, null, 2));
  assert.equal(doc.openapi, '3.1.0');
  assert.equal(doc.info.version, '1.0');

  // The reference's pages and the document itself are not operations of the API.
  const served = routesOf(app.printRoutes({ commonPrefix: false })).filter(
    (r) => r.path.startsWith('/api/') && !r.path.startsWith('/api/docs') && r.path !== '/api/openapi.json',
  );
  assert.ok(served.some((r) => r.path === '/api/user'), `route listing not understood: ${JSON.stringify(served)}`);
  const missing: string[] = [];
  let checked = 0;
  for (const { path, methods } of served) {
    for (const method of methods.filter((m) => m !== 'HEAD' && m !== 'OPTIONS')) {
      checked++;
      // Fastify's `:id` is OpenAPI's `{id}`.
      if (!doc.paths[path.replace(/:(\w+)/g, '{$1}')]?.[method.toLowerCase()]) missing.push(`${method} ${path}`);
    }
  }
  assert.deepEqual(missing, [], 'served but not documented');
  assert.ok(checked >= 22, `only ${checked} routes found`);
});

test('operationIds are the names issue 26 fixed: the path words of each POST operation, the fixed names of the rest', async (t) => {
  const { url } = await build(t);
  const doc = await documentOf(url);
  const posts = new Set(OPERATIONS.map((op) => `POST ${API_PREFIX}${op.path}`));
  for (const [path, methods] of Object.entries(doc.paths)) {
    for (const [method, op] of Object.entries(methods)) {
      const key = `${method.toUpperCase()} ${path}`;
      const expected = posts.has(key) ? operationIdOf(path.slice(API_PREFIX.length)) : FIXED_IDS[key];
      assert.ok(expected, `${key} has no fixed operationId`);
      assert.equal(op.operationId, expected, key);
    }
  }
  assert.equal(operationIdOf('/dns/lookup-bulk'), 'dnsLookupBulk');
  assert.equal(operationIdOf('/ipv6/expand'), 'ipv6Expand');
  assert.equal(operationIdOf('/ip/my-ip'), 'ipMyIp');
  assert.equal(toolNameOf('/port/scan-range'), 'port_scan_range');
});

test('each POST operation: 200 (its data) and 202 (the job) apart, Prefer, webhook_url, every error status with its codes', async (t) => {
  const { url } = await build(t);
  const doc = await documentOf(url);
  const json = (r: Operation['responses'][string] | undefined) => r?.content?.['application/json']?.schema;
  for (const op of OPERATIONS) {
    const o = doc.paths[API_PREFIX + op.path]?.post;
    assert.ok(o, op.path);
    const ok = json(o.responses['200']) as { properties: { data: unknown } };
    const job = json(o.responses['202']) as { properties: { data: unknown } };
    assert.notDeepEqual(ok.properties.data, job.properties.data, `${op.path}: 200 and 202 share a schema`);
    assert.deepEqual(job.properties.data, { $ref: '#/components/schemas/Job' }, op.path);
    assert.deepEqual(Object.keys(o.responses['202']!.headers ?? {}).sort(), ['Location', 'Preference-Applied', 'RateLimit-Policy', 'X-RateLimit-Limit', 'X-RateLimit-Remaining', 'X-RateLimit-Reset', 'X-Request-Id']);
    assert.ok(o.parameters?.some((p) => p.$ref === '#/components/parameters/Prefer'), `${op.path}: no Prefer`);
    const webhook = o.requestBody?.content['application/json']?.schema.properties?.webhook_url;
    assert.match(JSON.stringify(webhook ?? {}), /Only with `Prefer: respond-async`/, `${op.path}: webhook_url`);
    // Every status apart, never a 4XX/5XX range.
    assert.deepEqual(Object.keys(o.responses), ['200', '202', '400', '401', '403', '413', '415', '429', '500', '503'], op.path);
  }
  assert.equal(doc.paths['/api/jobs/{id}']?.delete?.responses['409']?.$ref, '#/components/responses/Conflict');
  assert.ok(doc.paths['/api/jobs/{id}']?.get?.responses['304']?.headers?.ETag);
  assert.deepEqual(Object.keys(doc.paths['/api/jobs/{id}']?.get?.responses['200']?.content ?? {}), ['application/json', 'application/x-ndjson', 'text/event-stream']);
  assert.ok(doc.paths['/api/jobs/{id}']?.get?.parameters?.some((p) => p.name === 'Last-Event-ID' && p.in === 'header'));
  const codes = (status: number) => doc.components.schemas[`Error${status}`]?.properties?.error?.enum;
  assert.deepEqual(codes(401), ['unauthorized']);
  assert.deepEqual(codes(403), ['forbidden', 'target_forbidden']);
  assert.deepEqual(codes(429), ['rate_limit_exceeded']);
  const unauthorized = doc.components.responses.Unauthorized as { headers: Record<string, unknown> };
  assert.ok(unauthorized.headers['WWW-Authenticate']);
  assert.ok((doc.components.responses.TooManyRequests as { headers: Record<string, unknown> }).headers['Retry-After']);
  assert.deepEqual(Object.keys(doc.webhooks), ['job.succeeded', 'job.failed', 'job.cancelled']);
  const signed = doc.webhooks['job.succeeded']!.post.parameters?.map((p) => p.$ref);
  assert.deepEqual(signed, ['#/components/parameters/WebhookId', '#/components/parameters/WebhookTimestamp', '#/components/parameters/WebhookSignature']);
});

test('the document points to nothing the server does not serve (no repository files)', async (t) => {
  const { url } = await build(t);
  const text = JSON.stringify(await documentOf(url));
  for (const pattern of [/docs\/[\w-]+/, /[\w-]+\.md\b/, /\bsrc\/[\w/.-]+/]) {
    assert.doesNotMatch(text, pattern);
  }
});

test('/api/docs serves the interactive reference without a token', async (t) => {
  const { url } = await build(t);
  const res = await fetch(`${url}/api/docs/`, { redirect: 'manual' });
  assert.equal(res.status, 200);
  assert.match(await res.text(), /swagger/i);
});

test('an operation that takes no body says so (requestBody not required), and answers a POST with no body and no Content-Type', async (t) => {
  const b = await build(t, { env: { NETDIAG_ALLOW_TARGETS: '127.0.0.0/8' } });
  const doc = await documentOf(b.url);
  const optional: string[] = [];
  for (const [path, methods] of Object.entries(doc.paths)) {
    for (const [method, op] of Object.entries(methods)) {
      const body = op.requestBody as { required?: boolean; content: Record<string, { schema: { anyOf?: { type?: string }[] } }> } | undefined;
      if (!body) continue;
      const admitsNull = body.content['application/json']?.schema.anyOf?.some((s) => s.type === 'null') ?? false;
      // Generated clients (openapi-fetch) and validating proxies (Prism) refuse a call without a body the document requires.
      assert.equal(body.required, !admitsNull, `${method.toUpperCase()} ${path}`);
      if (admitsNull) optional.push(`${method.toUpperCase()} ${path}`);
    }
  }
  assert.deepEqual(optional, ['POST /api/jobs/{id}/deliveries', 'POST /api/webhooks/secret/rotate']);

  const port = Number(new URL(b.url).port);
  // No Content-Type, no Content-Length, no Transfer-Encoding: a request with no body at all.
  const bare = (path: string) => rawRequest(port, httpText('POST', path, { authorization: `Bearer ${b.token}` }));
  const rotated = await bare('/api/webhooks/secret/rotate');
  assert.equal(rotated.status, 200, rotated.body);
  assert.match((JSON.parse(rotated.body) as { data: { secret: string } }).data.secret, /^whsec_/);
  const listener = await startListener('127.0.0.1');
  t.after(() => listener.close());
  const job = (await (await b.api('/api/port/scan', { json: { host: '127.0.0.1', port: listener.port }, headers: { prefer: 'respond-async' } })).json()) as { data: { id: string } };
  await finishedJob(b.api, job.data.id);
  // Past the body's validation to the route's own answer: this job has no webhook_url.
  const redelivered = await bare(`/api/jobs/${job.data.id}/deliveries`);
  assert.equal(redelivered.status, 409, redelivered.body);
  assert.match(redelivered.body, /webhook_url/);
});

test("a stream's body is checked item by item: each NDJSON line, each SSE event and its data, by the media type's x-item-schema", async (t) => {
  const b = await build(t, { env: { NETDIAG_ALLOW_TARGETS: '127.0.0.0/8' } });
  const doc = await documentOf(b.url);
  const ok = doc.paths['/api/jobs/{id}']!.get!.responses['200']!.content as Record<string, { schema: { type?: string }; 'x-item-schema'?: unknown }>;
  // The body of a stream is text; its items are described apart (a validator reading the whole body sees a string).
  assert.equal(ok['application/x-ndjson']!.schema.type, 'string');
  assert.equal(ok['text/event-stream']!.schema.type, 'string');
  assert.equal((ok['application/x-ndjson']!['x-item-schema'] as { title?: string }).title, 'JobStreamLine');

  const listener = await startListener('127.0.0.1');
  t.after(() => listener.close());
  const made = (await (await b.api('/api/port/scan-range', { json: { host: '127.0.0.1', ports: [listener.port] }, headers: { prefer: 'respond-async' } })).json()) as { data: { id: string } };
  await finishedJob(b.api, made.data.id);
  const read = async (accept: string) => (await b.api(`/api/jobs/${made.data.id}`, { headers: { accept } })).text();
  const ndjson = await read('application/x-ndjson');
  const sse = await read('text/event-stream');
  const answer = { method: 'GET', route: '/api/jobs/:id', status: 200, complete: true };
  assert.deepEqual(streamProblems(b.app, { ...answer, contentType: 'application/x-ndjson; charset=utf-8', text: ndjson }), []);
  assert.deepEqual(streamProblems(b.app, { ...answer, contentType: 'text/event-stream; charset=utf-8', text: sse }), []);
  assert.deepEqual(sseEvents(sse).map((e) => e.event), ['item', 'job']);

  // A line that drifts is caught, in either media type; a cut stream's partial last item is not judged.
  const drifted = ndjson.replace('"seq":1', '"seq":"1"');
  assert.match(streamProblems(b.app, { ...answer, contentType: 'application/x-ndjson', text: drifted }).join('\n'), /line 1 does not match the document/);
  assert.match(streamProblems(b.app, { ...answer, contentType: 'text/event-stream', text: sse.replace('"seq":1', '"seq":"1"') }).join('\n'), /event 1's data does not match/);
  assert.match(streamProblems(b.app, { ...answer, contentType: 'text/event-stream', text: sse.replace('event: item', 'event: items') }).join('\n'), /event 1 does not match/);
  assert.match(streamProblems(b.app, { ...answer, contentType: 'application/x-ndjson', text: ndjson.slice(0, -1) }).join('\n'), /does not end with a newline/);
  assert.deepEqual(streamProblems(b.app, { ...answer, complete: false, contentType: 'application/x-ndjson', text: ndjson.slice(0, -5) }), []);
});
