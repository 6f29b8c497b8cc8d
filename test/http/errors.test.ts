import assert from 'node:assert/strict';
import { request as httpRequest } from 'node:http';
import { test } from 'node:test';
import type { FastifyInstance } from 'fastify';
import { Type } from 'typebox';
import { ok } from '../../src/http/reply.js';
import { responses } from '../../src/http/schemas/common.js';
import { build } from '../helpers/build.js';

/** A route shaped like the tools' (strict body schema), so the shared machinery is exercised. */
function probeRoute(app: FastifyInstance) {
  app.post(
    '/api/test/probe',
    {
      schema: {
        body: Type.Object({
          host: Type.String({ minLength: 1 }),
          port: Type.Integer({ minimum: 1, maximum: 65535 }),
          ports: Type.Optional(Type.Array(Type.Integer({ minimum: 1, maximum: 65535 }), { minItems: 1, maxItems: 1000 })),
          options: Type.Optional(Type.Object({ fast: Type.Boolean() })),
          type: Type.Optional(Type.Enum(['A', 'AAAA'])),
        }),
        response: responses(Type.Object({ host: Type.String(), port: Type.Integer() })),
      },
    },
    async (request) => {
      const body = request.body as { host: string; port: number };
      return ok({ host: body.host, port: body.port }, 'probed');
    },
  );
  app.get('/api/test/boom', async () => {
    throw new Error('secret internal detail /etc/passwd');
  });
}

/** Raw HTTP, for what fetch will not send (bad JSON with a given length, odd methods). */
function raw(url: string, method: string, path: string, headers: Record<string, string>, body?: string | Buffer) {
  return new Promise<{ status: number; headers: Record<string, string | string[] | undefined>; body: string }>((resolve, reject) => {
    const req = httpRequest(url + path, { method, headers }, (res) => {
      let data = '';
      res.setEncoding('utf8');
      res.on('data', (c: string) => (data += c));
      res.on('end', () => resolve({ status: res.statusCode ?? 0, headers: res.headers, body: data }));
    });
    req.on('error', reject);
    if (body !== undefined) req.write(body);
    req.end();
  });
}

test('hostile input gets the 4xx and error body of docs/errors.md, never a 500', async (t) => {
  const { url, token } = await build(t, { extraRoutes: probeRoute });
  const auth = { authorization: `Bearer ${token}` };
  const json = { ...auth, 'content-type': 'application/json' };
  const twoMiB = JSON.stringify({ host: 'x'.repeat(2 * 1024 * 1024), port: 80 });

  const table: Array<{ name: string; method?: string; path?: string; headers?: Record<string, string>; body?: string; status: number; error: string; field?: string; message?: RegExp; allow?: string }> = [
    { name: 'invalid JSON', body: '{"host": "a", "port": 80', status: 400, error: 'invalid_json' },
    { name: 'JSON with a trailing comma', body: '{"host": "a", "port": 80,}', status: 400, error: 'invalid_json' },
    { name: 'empty body with JSON content type', body: '', status: 400, error: 'invalid_json' },
    { name: 'prototype poisoning', body: '{"host":"a","port":80,"__proto__":{"admin":true}}', status: 400, error: 'invalid_json' },
    { name: 'port as a string', body: '{"host":"a","port":"80"}', status: 400, error: 'validation_error', field: 'port', message: /^port: must be an integer$/ },
    { name: 'port as a float', body: '{"host":"a","port":80.5}', status: 400, error: 'validation_error', field: 'port' },
    { name: 'port out of range', body: '{"host":"a","port":70000}', status: 400, error: 'validation_error', field: 'port', message: /port: must be between 1 and 65535/ },
    { name: 'port zero', body: '{"host":"a","port":0}', status: 400, error: 'validation_error', field: 'port', message: /between 1 and 65535/ },
    { name: 'missing field', body: '{"port":80}', status: 400, error: 'validation_error', field: 'host', message: /^host: is required$/ },
    { name: 'empty host', body: '{"host":"","port":80}', status: 400, error: 'validation_error', field: 'host', message: /must not be empty/ },
    { name: 'null where a string belongs', body: '{"host":null,"port":80}', status: 400, error: 'validation_error', field: 'host' },
    { name: 'array body', body: '[{"host":"a","port":80}]', status: 400, error: 'validation_error', field: 'body', message: /must be a JSON object/ },
    { name: 'JSON null body', body: 'null', status: 400, error: 'validation_error' },
    { name: 'string body', body: '"hello"', status: 400, error: 'validation_error' },
    { name: 'array where an object belongs', body: '{"host":"a","port":80,"options":[true]}', status: 400, error: 'validation_error', field: 'options', message: /must be a JSON object/ },
    { name: 'object where an array belongs', body: '{"host":"a","port":80,"ports":{"0":80}}', status: 400, error: 'validation_error', field: 'ports', message: /must be an array/ },
    { name: 'too many entries', body: JSON.stringify({ host: 'a', port: 80, ports: Array.from({ length: 1001 }, (_, i) => i + 1) }), status: 400, error: 'validation_error', field: 'ports', message: /^ports: at most 1000 entries$/ },
    { name: 'bad array entry', body: '{"host":"a","port":80,"ports":[80,"443"]}', status: 400, error: 'validation_error', field: 'ports[1]' },
    { name: 'nested wrong type', body: '{"host":"a","port":80,"options":{"fast":"yes"}}', status: 400, error: 'validation_error', field: 'options.fast', message: /must be a boolean/ },
    { name: 'enum miss', body: '{"host":"a","port":80,"type":"MX"}', status: 400, error: 'validation_error', field: 'type', message: /must be one of A, AAAA/ },
    { name: 'no body at all', headers: auth, status: 400, error: 'validation_error', message: /JSON object/ },
    { name: '2 MiB body', body: twoMiB, status: 413, error: 'payload_too_large' },
    { name: 'text/plain body', headers: { ...auth, 'content-type': 'text/plain' }, body: 'host=a', status: 415, error: 'unsupported_media_type' },
    { name: 'form body', headers: { ...auth, 'content-type': 'application/x-www-form-urlencoded' }, body: 'host=a&port=80', status: 415, error: 'unsupported_media_type' },
    { name: 'unknown route', method: 'GET', path: '/api/does-not-exist', headers: auth, status: 404, error: 'not_found' },
    { name: 'unknown route outside /api', method: 'GET', path: '/wp-login.php', headers: {}, status: 404, error: 'not_found' },
    { name: 'path traversal', method: 'GET', path: '/api/../../etc/passwd', headers: auth, status: 404, error: 'not_found' },
    { name: 'wrong method', method: 'GET', path: '/api/test/probe', headers: auth, status: 405, error: 'method_not_allowed', allow: 'POST' },
    { name: 'DELETE on a GET route', method: 'DELETE', path: '/api/user', headers: auth, status: 405, error: 'method_not_allowed', allow: 'GET, HEAD' },
    // Fastify answers HEAD wherever GET is: Allow says so (RFC 9110 9.3.2).
    { name: 'POST on a GET route', method: 'POST', path: '/api/user', headers: json, body: '{}', status: 405, error: 'method_not_allowed', allow: 'GET, HEAD' },
    { name: 'empty bearer', headers: { authorization: 'Bearer ', 'content-type': 'application/json' }, body: '{}', status: 401, error: 'unauthorized' },
    // (several spaces before the token are allowed, RFC 9110 1*SP; a second word is not)
    { name: 'Bearer with two words', headers: { authorization: `Bearer  ${token} x`, 'content-type': 'application/json' }, body: '{}', status: 401, error: 'unauthorized' },
    { name: 'our own fault', method: 'GET', path: '/api/test/boom', headers: auth, status: 500, error: 'internal_error' },
  ];

  for (const c of table) {
    const res = await raw(url, c.method ?? 'POST', c.path ?? '/api/test/probe', c.headers ?? json, c.body);
    assert.equal(res.status, c.status, `${c.name}: ${res.body}`);
    const body = JSON.parse(res.body) as { success: boolean; error: string; message: string; details?: { field?: string } };
    assert.equal(body.success, false, c.name);
    assert.equal(body.error, c.error, c.name);
    assert.ok(typeof body.message === 'string' && body.message.length > 5, c.name);
    if (c.field) assert.equal(body.details?.field, c.field, c.name);
    if (c.message) assert.match(body.message, c.message, c.name);
    assert.ok(res.headers['x-request-id'], `${c.name}: X-Request-Id`);
    if (c.status === 405) assert.equal(res.headers.allow, c.allow, `${c.name}: Allow header`);
    if (c.status === 500) assert.ok(!/passwd|stack|Error:/.test(res.body), 'a 500 carries no internals');
  }

  // unknown body fields are ignored, and the good request still works after all that
  const good = await raw(url, 'POST', '/api/test/probe', json, '{"host":"a","port":80,"extra":{"x":[1]}}');
  assert.equal(good.status, 200);
  assert.deepEqual(JSON.parse(good.body), { success: true, data: { host: 'a', port: 80 }, message: 'probed' });
});

test('X-Request-Id: a sane incoming id is kept, anything else replaced', async (t) => {
  const { api } = await build(t);
  const kept = await api('/api/user', { headers: { 'x-request-id': 'trace-123.abc' } });
  assert.equal(kept.headers.get('x-request-id'), 'trace-123.abc');
  const replaced = await api('/api/user', { headers: { 'x-request-id': 'x'.repeat(500) } });
  const made = replaced.headers.get('x-request-id') ?? '';
  assert.match(made, /^[0-9a-f]{12}-[0-9a-z]+$/);
  const next = (await api('/api/user')).headers.get('x-request-id');
  assert.notEqual(next, made, 'every request gets its own id');
  const health = await fetch(kept.url.replace('/api/user', '/healthz'));
  assert.ok(health.headers.get('x-request-id'));
});

test('health: /healthz and /readyz need no token; readyz fails when the database does', async (t) => {
  const { url, store } = await build(t);
  assert.deepEqual(await (await fetch(`${url}/healthz`)).json(), { status: 'ok' });
  // No GeoIP data read yet (nothing looked up): no build dates to show.
  // The path tools are checked at the first ask (their programs run once, some 3 s): until then, "checking".
  assert.deepEqual(await (await fetch(`${url}/readyz`)).json(), { status: 'ready', geoip: { city_build_date: null, asn_build_date: null }, path_tools: 'checking' });
  store.sqlite.close();
  const res = await fetch(`${url}/readyz`);
  assert.equal(res.status, 503);
  assert.equal((await (await fetch(`${url}/healthz`)).json() as { status: string }).status, 'ok');
});
