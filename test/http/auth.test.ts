import assert from 'node:assert/strict';
import { readFileSync, existsSync } from 'node:fs';
import { join } from 'node:path';
import { test } from 'node:test';
import { runCli } from '../../src/cli.js';
import { build } from '../helpers/build.js';
import { assertMatchesOpenApi } from '../helpers/contract.js';

test('GET /api/user answers the User object of docs/security.md', async (t) => {
  const { api, app } = await build(t, { plan: 'basic' });
  const res = await api('/api/user');
  assert.equal(res.status, 200);
  const body = (await res.json()) as { success: boolean; message: string; data: Record<string, unknown> };
  assert.equal(body.success, true);
  assert.equal(typeof body.message, 'string');
  const { created_at, ...rest } = body.data;
  assert.deepEqual(rest, {
    id: 1,
    name: 'Tester',
    email: 'tester@example.com',
    plan: 'basic',
    api_calls_used: rest.api_calls_used,
    api_calls_limit: 5000,
    rate_limit: { requests_per_minute: 30, requests_per_hour: 500, requests_per_day: 5000 },
  });
  assert.equal(typeof rest.api_calls_used, 'number');
  assert.match(String(created_at), /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d/);
  await assertMatchesOpenApi(app, 'GET', '/api/user', 200, body);
});

test('missing, malformed, unknown and revoked tokens are 401; a suspended account is 403', async (t) => {
  const { api, accounts, app } = await build(t);
  const cases: Array<[string, Record<string, string>, string]> = [
    ['no header', {}, 'unauthorized'],
    ['empty bearer', { authorization: 'Bearer ' }, 'unauthorized'],
    ['bearer alone', { authorization: 'Bearer' }, 'unauthorized'],
    ['Bearer with spaces', { authorization: 'Bearer   nd_aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa  x' }, 'unauthorized'],
    ['wrong scheme', { authorization: 'Basic dXNlcjpwYXNz' }, 'unauthorized'],
    ['lower-case scheme with garbage', { authorization: 'bearer' }, 'unauthorized'],
    ['not our token shape', { authorization: 'Bearer abc' }, 'unauthorized'],
    ['unknown token', { authorization: `Bearer nd_${'A'.repeat(40)}` }, 'unauthorized'],
    ['token with a newline-ish control', { authorization: `Bearer nd_${'A'.repeat(39)}\u0001` }, 'unauthorized'],
  ];
  for (const [name, headers, code] of cases) {
    const res = await api('/api/user', { headers, token: null }).catch((e: Error) => e);
    if (res instanceof Error) continue; // fetch itself refuses control characters: nothing reached us
    assert.equal(res.status, 401, name);
    const body = (await res.json()) as { success: boolean; error: string; message: string };
    assert.equal(body.success, false, name);
    assert.equal(body.error, code, name);
    assert.ok(body.message.length > 10, name);
    await assertMatchesOpenApi(app, 'GET', '/api/user', 401, body);
  }

  // suspension takes effect on the next request, and resuming restores access
  await accounts.setStatus('tester@example.com', 'suspended');
  const suspended = await api('/api/user');
  assert.equal(suspended.status, 403);
  assert.equal(((await suspended.json()) as { error: string }).error, 'forbidden');
  await accounts.setStatus('tester@example.com', 'active');
  assert.equal((await api('/api/user')).status, 200);
});

test('revoking a token (from the CLI, another connection) takes effect on the very next request', async (t) => {
  const { api, dbPath, accounts } = await build(t);
  const { token, id } = await accounts.createToken('tester@example.com', 'to revoke');
  assert.equal((await api('/api/user', { token })).status, 200);
  const code = await runCli(['token', 'revoke', '--id', String(id)], {
    env: { DATABASE_URL: `sqlite:${dbPath}` },
    stdout: () => {},
    stderr: () => {},
  });
  assert.equal(code, 0);
  const res = await api('/api/user', { token });
  assert.equal(res.status, 401);
  assert.match(((await res.json()) as { message: string }).message, /revoked/);
  // the account's other token still works
  assert.equal((await api('/api/user')).status, 200);
});

test('no plaintext token anywhere in the database files', async (t) => {
  const { api, dbPath, accounts, token, store } = await build(t);
  const more = await Promise.all([1, 2, 3].map((i) => accounts.createToken('tester@example.com', `t${i}`)));
  for (const x of more) assert.equal((await api('/api/user', { token: x.token })).status, 200);
  await store.close(); // flushes last_used_at and checkpoints the WAL
  const secrets = [token, ...more.map((x) => x.token)];
  for (const file of [dbPath, `${dbPath}-wal`, `${dbPath}-shm`].filter(existsSync)) {
    const bytes = readFileSync(file).toString('latin1');
    for (const secret of secrets) {
      assert.ok(!bytes.includes(secret), `${file} contains a plaintext token`);
      assert.ok(!bytes.includes(secret.slice(3)), `${file} contains a token's random part`);
    }
  }
  assert.ok(readFileSync(join(dbPath)).length > 0);
});

test('without a limiter and usage recording (the benchmark of authentication alone) tokens are still checked', async (t) => {
  const { api, store } = await build(t, { deps: { limiter: null, recordUsage: false } });
  const ok = await api('/api/user');
  assert.equal(ok.status, 200);
  assert.ok(ok.headers.get('x-request-id'));
  assert.equal(ok.headers.get('x-ratelimit-limit'), null);
  assert.equal(ok.headers.get('ratelimit-policy'), null);
  const body = (await ok.json()) as { data: { api_calls_used: number } };
  assert.equal(body.data.api_calls_used, 0);

  const unknown = await api('/api/user', { token: `nd_${'A'.repeat(40)}` });
  assert.equal(unknown.status, 401);
  assert.equal(((await unknown.json()) as { error: string }).error, 'unauthorized');
  assert.equal((await api('/api/user', { token: null })).status, 401);
  // the OpenAPI document stays public
  assert.equal((await api('/api/openapi.json', { token: null })).status, 200);

  assert.deepEqual(await store.usage.rows(1, '2000-01-01', '2999-12-31'), []);
});
