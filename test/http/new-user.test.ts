import assert from 'node:assert/strict';
import { test } from 'node:test';
import { build } from '../helpers/build.js';
import { assertMatchesOpenApi } from '../helpers/contract.js';

/** Issue 16, "What a new user trips over": each test here failed before its fix. */

interface Err {
  success: false;
  error: string;
  message: string;
}

test('the Authorization scheme word is case-insensitive and may be followed by several spaces (RFC 9110)', async (t) => {
  const { api, token } = await build(t);
  for (const value of [`bearer ${token}`, `BEARER ${token}`, `bEaReR ${token}`, `Bearer   ${token}`]) {
    const res = await api('/api/user', { headers: { authorization: value }, token: null });
    assert.equal(res.status, 200, value);
  }
  for (const value of [`Bearer\t${token}`, `Basic ${token}`, `bearer${token}`, `bearer ${token} x`]) {
    const res = await api('/api/user', { headers: { authorization: value }, token: null });
    assert.equal(res.status, 401, value);
  }
});

test('ten wrong tokens use up the address\'s budget for tokens, not for reading the API document', async (t) => {
  const { api } = await build(t);
  for (let i = 0; i < 10; i++) assert.equal((await api('/api/user', { token: `nd_${'x'.repeat(40)}` })).status, 401);
  assert.equal((await api('/api/user', { token: `nd_${'y'.repeat(40)}` })).status, 429, 'token guessing is limited');
  const doc = await api('/api/openapi.json', { token: null });
  assert.equal(doc.status, 200, 'the document is still readable');
  assert.equal(doc.headers.get('x-ratelimit-remaining'), '9', 'it has a budget of its own');
});

test('enumerations are accepted in any case and answered in canonical case: preset, usage export format', async (t) => {
  const { api, app } = await build(t, { env: { NETDIAG_ALLOW_TARGETS: '127.0.0.0/8' } });
  const { PRESETS } = await import('../../src/domain/ports/index.js');
  const scan = await api('/api/port/scan-common', { json: { host: '127.0.0.1', preset: 'WEB', timeout: 1 } });
  assert.equal(scan.status, 200);
  const scanBody = (await scan.json()) as { data: Array<{ port: number }> };
  await assertMatchesOpenApi(app, 'POST', '/api/port/scan-common', 200, scanBody);
  assert.deepEqual(scanBody.data.map((i) => i.port), [...PRESETS.web]);

  const csv = await api('/api/usage/export?format=CSV&days=1');
  assert.equal(csv.status, 200);
  assert.match(csv.headers.get('content-type') ?? '', /^text\/csv/);

  // a miss lists the canonical values
  const miss = await api('/api/usage/export?format=xml');
  assert.equal(miss.status, 400);
  const missBody = (await miss.json()) as Err;
  assert.equal(missBody.message, 'format: must be one of json, csv');
  await assertMatchesOpenApi(app, 'GET', '/api/usage/export', 400, missBody);
});

test('a number out of its range names both bounds', async (t) => {
  const { api, app } = await build(t);
  for (const days of [0, 366]) {
    const res = await api(`/api/usage/history?days=${days}`);
    assert.equal(res.status, 400);
    const body = (await res.json()) as Err;
    assert.equal(body.message, 'days: must be between 1 and 365');
    await assertMatchesOpenApi(app, 'GET', '/api/usage/history', 400, body);
  }
  const port = await api('/api/port/scan', { json: { host: '127.0.0.1', port: 0 } });
  assert.equal(((await port.json()) as Err).message, 'port: must be between 1 and 65535');
});

test('/port/scan-range takes ports as an nmap-style string, under the same bound', async (t) => {
  const { api, app } = await build(t, { env: { NETDIAG_ALLOW_TARGETS: '127.0.0.0/8' } });
  const res = await api('/api/port/scan-range', { json: { host: '127.0.0.1', ports: '8002, 22,8000-8002', timeout: 1 } });
  assert.equal(res.status, 200);
  const body = (await res.json()) as { data: Array<{ port: number }> };
  await assertMatchesOpenApi(app, 'POST', '/api/port/scan-range', 200, body);
  assert.deepEqual(body.data.map((i) => i.port), [22, 8000, 8001, 8002]);

  const cases: Array<[unknown, string]> = [
    ['1-2000', 'ports: at most 1000 ports, "1-2000" expands to 2000; a job (Prefer: respond-async) takes up to 65535'],
    [Array.from({ length: 1001 }, (_, i) => i + 1), 'ports: at most 1000 entries; a job (Prefer: respond-async) takes up to 65535'],
    ['22,80x', 'ports: "80x" is not a port or a range like 22 or 8000-8100'],
    ['', 'ports: must name at least one port, like "22,80,8000-8100"'],
    [[80, 0], 'ports[1]: must be between 1 and 65535'],
    [80, 'ports: must be an array or a string'],
  ];
  for (const [ports, message] of cases) {
    const bad = await api('/api/port/scan-range', { json: { host: '127.0.0.1', ports } });
    assert.equal(bad.status, 400, JSON.stringify(ports));
    const badBody = (await bad.json()) as Err;
    assert.equal(badBody.message, message);
    await assertMatchesOpenApi(app, 'POST', '/api/port/scan-range', 400, badBody);
  }
});

test('a URL or a host:port in a host field is answered for what it is', async (t) => {
  const { api, app } = await build(t, { env: { NETDIAG_ALLOW_TARGETS: '127.0.0.0/8' } });
  const cases: Array<[string, unknown, string]> = [
    ['/api/port/scan', { host: 'http://127.0.0.1', port: 80 }, 'host: give a host name or IP address, not a URL (127.0.0.1, not http://127.0.0.1)'],
    ['/api/port/scan', { host: '127.0.0.1:80', port: 80 }, 'host: give the port in `port`/`ports`, not in the host'],
    ['/api/port/scan-range', { host: '[2001:db8::1]:443', ports: [443] }, 'host: give the port in `port`/`ports`, not in the host'],
    ['/api/ipv6/test', { target: 'https://example.com/' }, 'target: give a host name or IP address, not a URL (example.com, not https://example.com/)'],
    ['/api/dns/lookup', { domain: 'http://example.com' }, 'domain: give a domain name, not a URL (example.com, not http://example.com)'],
    ['/api/dns/lookup', { domain: 'example.com:53' }, 'domain: give the domain name alone, without a port'],
  ];
  for (const [path, json, message] of cases) {
    const res = await api(path, { json });
    assert.equal(res.status, 400, JSON.stringify(json));
    const body = (await res.json()) as Err;
    assert.equal(body.message, message);
    await assertMatchesOpenApi(app, 'POST', path, 400, body);
  }
});

test('invalid JSON says where it goes wrong', async (t) => {
  const { api, app } = await build(t);
  const res = await api('/api/port/scan', { method: 'POST', headers: { 'content-type': 'application/json' }, body: '{\n  "host": "a",\n  "port": 80,\n}' });
  assert.equal(res.status, 400);
  const body = (await res.json()) as Err;
  assert.equal(body.error, 'invalid_json');
  assert.equal(body.message, 'request body is not valid JSON: line 4, column 1: a trailing comma before "}"');
  await assertMatchesOpenApi(app, 'POST', '/api/port/scan', 400, body);

  const poisoned = await api('/api/port/scan', { method: 'POST', headers: { 'content-type': 'application/json' }, body: '{"host":"a","port":80,"__proto__":{"x":1}}' });
  assert.equal(poisoned.status, 400);
  assert.match(((await poisoned.json()) as Err).message, /__proto__/);
});
