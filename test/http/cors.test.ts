import assert from 'node:assert/strict';
import { test } from 'node:test';
import { loadConfig, parseCorsOrigins } from '../../src/config.js';
import { CORS_ALLOWED_HEADERS, CORS_EXPOSED_HEADERS, CORS_MAX_AGE_S } from '../../src/http/plugins/cors.js';
import { build } from '../helpers/build.js';

const APP = 'https://app.example.com';

test('NETDIAG_CORS_ORIGINS: exact origins or "*", none by default; anything else stops the boot naming the variable', () => {
  assert.deepEqual(loadConfig({}).corsOrigins, []);
  assert.deepEqual(parseCorsOrigins(' https://app.example.com , http://localhost:5173 '), ['https://app.example.com', 'http://localhost:5173']);
  assert.deepEqual(parseCorsOrigins('*'), ['*']);
  for (const bad of ['https://app.example.com/', 'https://app.example.com/path', 'app.example.com', 'ftp://files.example.com', 'https://App.example.com', 'https://app.example.com:443', 'null', '*,https://app.example.com']) {
    assert.throws(() => loadConfig({ NETDIAG_CORS_ORIGINS: bad }), /NETDIAG_CORS_ORIGINS/, bad);
  }
  assert.throws(() => loadConfig({ NETDIAG_CORS_ORIGINS: 'https://app.example.com/' }), /write "https:\/\/app.example.com"/);
});

const corsHeaders = (res: Response): string[] => [...res.headers.keys()].filter((k) => k.startsWith('access-control-'));

test('without NETDIAG_CORS_ORIGINS no answer carries a CORS header, and a preflight is refused', async (t) => {
  const b = await build(t);
  const res = await b.api('/api/user', { headers: { origin: APP } });
  assert.equal(res.status, 200);
  assert.deepEqual(corsHeaders(res), []);
  const preflight = await b.api('/api/port/scan', { method: 'OPTIONS', token: null, headers: { origin: APP, 'access-control-request-method': 'POST' } });
  // Without a token, as any other request to /api.
  assert.equal(preflight.status, 401);
  assert.deepEqual(corsHeaders(preflight), []);
});

test('a listed origin: the preflight of /api is answered before the token check, answers and errors carry the headers', async (t) => {
  const b = await build(t, { env: { NETDIAG_CORS_ORIGINS: `${APP},http://localhost:5173` } });
  const preflight = await b.api('/api/port/scan', {
    method: 'OPTIONS',
    token: null,
    headers: { origin: APP, 'access-control-request-method': 'POST', 'access-control-request-headers': 'authorization,content-type,prefer' },
  });
  assert.equal(preflight.status, 204);
  assert.equal(preflight.headers.get('access-control-allow-origin'), APP);
  assert.match(preflight.headers.get('vary') ?? '', /Origin/);
  assert.deepEqual(preflight.headers.get('access-control-allow-headers')?.split(', '), [...CORS_ALLOWED_HEADERS]);
  assert.match(preflight.headers.get('access-control-allow-methods') ?? '', /\bPOST\b/);
  assert.equal(preflight.headers.get('access-control-max-age'), String(CORS_MAX_AGE_S));
  assert.equal(preflight.headers.get('access-control-allow-credentials'), null, 'the token is a header, never a cookie');

  const user = await b.api('/api/user', { headers: { origin: APP } });
  assert.equal(user.status, 200);
  assert.equal(user.headers.get('access-control-allow-origin'), APP);
  assert.deepEqual(user.headers.get('access-control-expose-headers')?.split(', '), [...CORS_EXPOSED_HEADERS]);
  // A page reads the errors too.
  const refused = await b.api('/api/user', { token: 'nd_not-a-token', headers: { origin: 'http://localhost:5173' } });
  assert.equal(refused.status, 401);
  assert.equal(refused.headers.get('access-control-allow-origin'), 'http://localhost:5173');

  // An origin not listed, the dashboard, the judge: as without CORS.
  const other = await b.api('/api/user', { headers: { origin: 'https://evil.example' } });
  assert.equal(other.status, 200);
  assert.deepEqual(corsHeaders(other), []);
  const otherPreflight = await b.api('/api/user', { method: 'OPTIONS', token: null, headers: { origin: 'https://evil.example', 'access-control-request-method': 'GET' } });
  assert.equal(otherPreflight.status, 405);
  assert.deepEqual(corsHeaders(otherPreflight), []);
  for (const path of ['/login', '/judge', '/healthz']) {
    const res = await b.api(path, { token: null, headers: { origin: APP } });
    assert.deepEqual(corsHeaders(res), [], path);
    await res.arrayBuffer();
  }
  const pagePreflight = await b.api('/login', { method: 'OPTIONS', token: null, headers: { origin: APP, 'access-control-request-method': 'POST' } });
  assert.equal(pagePreflight.status, 405);
  assert.deepEqual(corsHeaders(pagePreflight), []);
  // An OPTIONS that is no preflight keeps its 405 and Allow.
  const plain = await b.api('/api/user', { method: 'OPTIONS', headers: { origin: APP } });
  assert.equal(plain.status, 405);
  assert.equal(plain.headers.get('allow'), 'GET, HEAD');
});

test('NETDIAG_CORS_ORIGINS=* lets any origin read /api', async (t) => {
  const b = await build(t, { env: { NETDIAG_CORS_ORIGINS: '*' } });
  const res = await b.api('/api/user', { headers: { origin: 'https://anywhere.example' } });
  assert.equal(res.status, 200);
  assert.equal(res.headers.get('access-control-allow-origin'), '*');
  const page = await b.api('/login', { token: null, headers: { origin: 'https://anywhere.example' } });
  assert.deepEqual(corsHeaders(page), []);
});
