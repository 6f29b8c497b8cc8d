import assert from 'node:assert/strict';
import { test } from 'node:test';
import { createDialer } from '../../src/infra/net/dialer.js';
import { roomyLimiter } from '../helpers/roomy-limiter.js';
import { build, type Built } from '../helpers/build.js';
import { httpText, rawRequest } from '../helpers/raw-http.js';
import { connectSpy } from '../infra/net/fixtures/connect-spy.js';

/**
 * Access is decided on the route that matched, not on the URL as sent: every spelling of an /api
 * path that the router maps to a handler is authenticated like the plain path, and one that it
 * maps to no handler is a 404. An attacker's table of spellings, sent as raw bytes (no client
 * normalises them), against every route of the published document.
 */

/** One body that every POST tool accepts, aimed at loopback port 1 (closed), so a leak would show on the dialer. */
const BODY = JSON.stringify({
  proxy: '127.0.0.1:1',
  proxies: ['127.0.0.1:1'],
  ip: '192.0.2.1',
  ips: ['192.0.2.1'],
  domain: 'example.com',
  domains: ['example.com'],
  type: 'A',
  host: '127.0.0.1',
  port: 1,
  ports: [1],
  preset: 'web',
  target: '127.0.0.1',
  ipv6: '::1',
  timeout: 1,
});

const encode = (c: string, upper: boolean): string => {
  const hex = c.charCodeAt(0).toString(16);
  return `%${upper ? hex.toUpperCase() : hex}`;
};

/** Spellings of `/api/<rest>`: [name, request-target]. */
export function spellings(rest: string): Array<[string, string]> {
  const first = rest[0]!;
  const tail = rest.slice(1);
  return [
    ['a encoded', `/%61pi/${rest}`],
    ['p encoded', `/a%70i/${rest}`],
    ['i encoded', `/ap%69/${rest}`],
    ['api encoded', `/%61%70%69/${rest}`],
    ['slash encoded, upper hex', `/api%2F${rest}`],
    ['slash encoded, lower hex', `/api%2f${rest}`],
    ['first letter of the tool encoded, lower hex', `/api/${encode(first, false)}${tail}`],
    ['first letter of the tool encoded, upper hex', `/api/${encode(first, true)}${tail}`],
    ['every character encoded', `/${[...`api/${rest}`].map((c) => (c === '/' ? c : encode(c, true))).join('')}`],
    ['absolute-form', `http://netdiag.test/api/${rest}`],
    ['absolute-form, encoded', `http://netdiag.test/%61pi/${rest}`],
    ['dot segment', `/api/./${rest}`],
    ['dot-dot segment', `/x/../api/${rest}`],
    ['encoded dot segment', `/api/%2e/${rest}`],
    ['double slash in front', `//api/${rest}`],
    ['double slash inside', `/api//${rest}`],
    ['trailing ;', `/api/${rest};`],
    ['trailing ?', `/api/${rest}?`],
    ['trailing slash', `/api/${rest}/`],
    ['upper-case prefix', `/API/${rest}`],
    ['double-encoded a', `/%2561pi/${rest}`],
  ];
}


interface Route {
  method: string;
  rest: string;
}

async function apiRoutes(b: Built): Promise<Route[]> {
  const doc = (await (await b.api('/api/openapi.json', { token: null })).json()) as { paths: Record<string, Record<string, unknown>> };
  const routes: Route[] = [];
  for (const [path, ops] of Object.entries(doc.paths)) {
    if (!path.startsWith('/api/')) continue;
    for (const method of Object.keys(ops)) routes.push({ method: method.toUpperCase(), rest: path.slice('/api/'.length) });
  }
  return routes;
}

async function setup(t: import('node:test').TestContext) {
  const spy = connectSpy();
  const dialer = createDialer({ allowTargets: ['127.0.0.0/8'], dnsServers: [{ host: '127.0.0.1', port: 1 }] }, { connectFn: spy.fn });
  // Runs right before a handler, after every check that guards it: a request that reaches it
  // reached the handler. The not-found handler runs it too, and so do the judge and the public
  // document: those are not the handlers under test.
  const reached: string[] = [];
  const b = await build(t, {
    deps: { dialer, limiter: roomyLimiter() },
    extraRoutes: (app) =>
      app.addHook('preHandler', (request, _reply, done) => {
        const route = request.routeOptions.url ?? '';
        if (!request.is404 && route.startsWith('/api/') && route !== '/api/openapi.json') reached.push(`${request.method} ${request.url}`);
        done();
      }),
  });
  const port = Number(new URL(b.url).port);
  const send = (method: string, target: string, token?: string) =>
    rawRequest(port, httpText(method, target, token ? { authorization: `Bearer ${token}` } : {}, method === 'POST' ? BODY : undefined));
  return { b, spy, dialer, reached, send };
}

test('every /api route, every spelling, no token: 401 or 404 in the envelope, no handler reached', async (t) => {
  const { b, spy, dialer, reached, send } = await setup(t);
  const routes = await apiRoutes(b);
  assert.ok(routes.length >= 16, `the document lists ${routes.length} /api routes`);
  let requests = 0;
  const outcomes = new Map<string, number>();
  for (const { method, rest } of routes) {
    for (const [name, target] of [['plain', `/api/${rest}`] as [string, string], ...spellings(rest)]) {
      const res = await send(method, target);
      requests++;
      const label = `${method} ${target} (${name})`;
      assert.ok(res.status === 401 || res.status === 404, `${label} → ${res.status} ${res.body.slice(0, 160)}`);
      const body = JSON.parse(res.body) as { success: boolean; error: string; message: string };
      assert.equal(body.success, false, label);
      assert.equal(body.error, res.status === 401 ? 'unauthorized' : 'not_found', label);
      assert.ok(body.message.length > 0, label);
      outcomes.set(String(res.status), (outcomes.get(String(res.status)) ?? 0) + 1);
    }
  }
  assert.deepEqual(reached, [], 'no request without a token reached a handler');
  assert.equal(spy.calls.length, 0, 'the dialer was never asked to connect');
  assert.equal(dialer.stats.connectAttempts, 0);
  t.diagnostic(`${requests} requests over ${routes.length} routes: ${JSON.stringify(Object.fromEntries(outcomes))}`);
});

test('with a token, a spelling that reaches a handler is limited and recorded as the plain path', async (t) => {
  const { b, reached, send } = await setup(t);
  const plain = await send('GET', '/api/user', b.token);
  assert.equal(plain.status, 200);
  for (const target of ['/%61pi/user', '/%61%70%69/%75ser', 'http://netdiag.test/api/user', '/api/user?']) {
    const res = await send('GET', target, b.token);
    assert.equal(res.status, 200, target);
    assert.ok(res.headers['x-ratelimit-limit'], `${target}: rate-limit headers`);
    assert.equal((JSON.parse(res.body) as { data: { email: string } }).data.email, 'tester@example.com');
  }
  assert.equal(reached.length, 5, `the control: with a token the handler is reached: ${reached.join(', ')}`);
  const stats = (await (await b.api('/api/usage/stats')).json()) as { data: { by_endpoint: Record<string, number> } };
  assert.equal(stats.data.by_endpoint['/user'], 5, JSON.stringify(stats.data.by_endpoint));
  assert.equal(stats.data.by_endpoint['(unmatched)'], undefined);
});

test('a route that needs an account never runs without one: no 500 for any spelling of a GET', async (t) => {
  const { send } = await setup(t);
  for (const rest of ['user', 'usage/stats', 'usage/history', 'usage/export']) {
    for (const [, target] of spellings(rest)) {
      const res = await send('GET', target);
      assert.ok(res.status < 500, `${target} → ${res.status}`);
    }
  }
});
