import assert from 'node:assert/strict';
import { test } from 'node:test';
import { composeApp } from '../../src/compose-app.js';
import { loadConfig } from '../../src/config.js';
import { AccountService } from '../../src/domain/accounts/service.js';
import { PLANS } from '../../src/domain/accounts/plans.js';
import { openPostgresStore } from '../../src/infra/store/postgres.js';
import { build } from '../helpers/build.js';
import { PrivateCluster, findPgCtl } from '../helpers/pg-cluster.js';
import { TEST_DATABASE_URL } from '../infra/store/backends.js';
import { checkResponses } from '../helpers/contract.js';

/**
 * docs/errors.md, Envelope and errors: every 401 carries `WWW-Authenticate: Bearer realm="netdiag"`
 * (with `error="invalid_token"` when a token was given, RFC 6750), and a 503 while the database
 * cannot be reached still carries the rate-limit headers, from the limiter's last known state.
 */

const CHALLENGE = 'Bearer realm="netdiag"';
const INVALID = 'Bearer realm="netdiag", error="invalid_token"';

test('every 401 carries WWW-Authenticate; invalid_token when a token was given', async (t) => {
  const { api, token } = await build(t);
  const cases: Array<[string, string, Record<string, string>, string]> = [
    ['no header', '/api/user', {}, CHALLENGE],
    ['no header, unknown path under /api', '/api/nope', {}, CHALLENGE],
    ['wrong scheme', '/api/user', { authorization: 'Basic dXNlcjpwYXNz' }, INVALID],
    ['malformed token', '/api/user', { authorization: 'Bearer abc' }, INVALID],
    ['unknown token', '/api/user', { authorization: `Bearer nd_${'A'.repeat(40)}` }, INVALID],
  ];
  for (const [name, path, headers, challenge] of cases) {
    const res = await api(path, { headers, token: null });
    assert.equal(res.status, 401, name);
    assert.equal(res.headers.get('www-authenticate'), challenge, name);
  }
  const ok = await api('/api/user');
  assert.equal(ok.status, 200);
  assert.equal(ok.headers.get('www-authenticate'), null, 'only 401s challenge');
  assert.ok(token);
});

const server = findPgCtl();
if (!TEST_DATABASE_URL) {
  test('503 headers: skipped because TEST_DATABASE_URL is unset', { skip: 'TEST_DATABASE_URL is unset' }, () => {});
} else if ('missing' in server) {
  test('503 headers: skipped because the PostgreSQL server binaries are missing', { skip: server.missing }, () => {});
} else {
  const pgCtl = server.pgCtl;
  const limiters: Array<[string, string | undefined]> = [['in-process limiter', undefined]];
  if (process.env.TEST_REDIS_URL) limiters.push(['Redis limiter', process.env.TEST_REDIS_URL]);
  let tests = 0;
  for (const [name, redisUrl] of limiters) {
    test(`PostgreSQL stopped (${name}): the 503s carry the rate-limit headers of the account or of the address`, { timeout: 60_000 }, async (t) => {
      const cluster = await PrivateCluster.create(pgCtl);
      t.after(() => cluster.destroy());
      // A minute of this test's own (the shared Redis may hold other runs' counts).
      const at = Date.UTC(2004, 0, 1, 12, 0, 30) + ((process.pid % 1000) * 4 + tests++) * 86_400_000;
      const clock = () => new Date(at);
      const store = await openPostgresStore(cluster.url);
      const config = loadConfig({ DATABASE_URL: cluster.url, NETDIAG_DNS_SERVERS: '127.0.0.1:1', ...(redisUrl ? { REDIS_URL: redisUrl } : {}) });
      const app = await composeApp({ config, store, logger: false, clock });
      checkResponses(t, app);
      t.after(async () => {
        await app.close();
        await store.close();
      });
      const { token } = await new AccountService(store, clock).createAccount({ email: `outage${process.pid}@example.com`, name: 'Outage', plan: 'pro' });
      await app.listen({ port: 0, host: '127.0.0.1' });
      const address = app.server.address();
      const base = `http://127.0.0.1:${typeof address === 'object' && address ? address.port : 0}`;
      const get = (auth: string | null) => fetch(`${base}/api/user`, auth === null ? {} : { headers: { authorization: auth } });

      const perMinute = PLANS.pro.requests_per_minute;
      for (let i = 0; i < 3; i++) assert.equal((await get(`Bearer ${token}`)).status, 200);
      // The address's own windows: one token-less request.
      assert.equal((await get(null)).status, 401);

      await cluster.stop('fast');
      const refused = await get(`Bearer ${token}`);
      assert.equal(refused.status, 503);
      assert.equal(((await refused.json()) as { error: string }).error, 'service_unavailable');
      assert.ok(refused.headers.get('retry-after'));
      assert.equal(refused.headers.get('x-ratelimit-limit'), String(perMinute), "the account's plan");
      assert.equal(refused.headers.get('x-ratelimit-remaining'), String(perMinute - 3), 'the 503 is not a call');
      assert.equal(refused.headers.get('x-ratelimit-reset'), String(Math.ceil((at - (at % 60_000) + 60_000) / 1000)));
      assert.equal(refused.headers.get('ratelimit-policy'), '60;w=60, 1000;w=3600, 10000;w=86400');

      // A token this instance has never seen: the address's windows.
      const unknown = await get(`Bearer nd_${'Z'.repeat(40)}`);
      assert.equal(unknown.status, 503);
      assert.equal(unknown.headers.get('x-ratelimit-limit'), String(PLANS.free.requests_per_minute));
      assert.equal(unknown.headers.get('x-ratelimit-remaining'), String(PLANS.free.requests_per_minute - 1));
      assert.equal(unknown.headers.get('ratelimit-policy'), '10;w=60, 100;w=3600, 500;w=86400');
    });
  }
}
