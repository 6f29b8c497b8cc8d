import assert from 'node:assert/strict';
import { test, type TestContext } from 'node:test';
import { composeApp } from '../../src/compose-app.js';
import { loadConfig } from '../../src/config.js';
import { AccountService } from '../../src/domain/accounts/service.js';
import type { RateLimiter } from '../../src/domain/usage/rate-limit.js';
import { TEST_DATABASE_URL, postgresBackend } from '../infra/store/backends.js';

/**
 * On PostgreSQL a token's check is answered from the auth cache once its fence is (pg-auth-cache.ts).
 * These tests change the token or the account through another connection, as the CLI or another
 * instance would, and check that the very next request is judged by what the check finds: a
 * refused token never answers 200 and is never counted, and a plan change applies its own limits
 * at once. (They were written for an early consume sent before the check, since removed.)
 */

const DAY_MS = 86_400_000;
/** Tests so far in this process: each has a day of its own (accounts of other schemas share ids, and may share a Redis). */
let tests = 0;

async function setUp(t: TestContext, url: string, redisUrl: string | undefined, plan: string, limiter?: RateLimiter) {
  // A fixed clock in the middle of a minute: no window ends during a test.
  const at = Date.UTC(2001, 0, 1, 12, 0, 30) + ((process.pid % 1000) * 8 + tests++) * DAY_MS;
  const clock = () => new Date(at);
  const backend = postgresBackend(url);
  const store = await backend.open();
  const cli = await backend.open();
  const config = loadConfig({ DATABASE_URL: url, NETDIAG_DNS_SERVERS: '127.0.0.1:1', ...(redisUrl ? { REDIS_URL: redisUrl } : {}) });
  const app = await composeApp({ config, store, logger: false, clock, ...(limiter ? { limiter } : {}) });
  t.after(async () => {
    await app.close();
    await store.close();
    await cli.close();
    await backend.drop();
  });
  const email = `${backend.schema}@example.com`;
  const { token } = await new AccountService(store, clock).createAccount({ email, name: 'Early', plan });
  const get = (tok: string) => app.inject({ method: 'GET', url: '/api/user', headers: { authorization: `Bearer ${tok}` } });
  return { get, token, email, operator: new AccountService(cli, clock), accounts: new AccountService(store, clock) };
}

const remaining = (res: { headers: Record<string, unknown> }) => Number(res.headers['x-ratelimit-remaining']);

if (!TEST_DATABASE_URL) {
  test('early consume on PostgreSQL: skipped because TEST_DATABASE_URL is unset (.ci/run sets it)', { skip: 'TEST_DATABASE_URL is unset' }, () => {});
} else {
  const url = TEST_DATABASE_URL;
  const limiters: Array<[string, string | undefined]> = [['in-process limiter', undefined]];
  if (process.env.TEST_REDIS_URL) limiters.push(['Redis limiter', process.env.TEST_REDIS_URL]);

  for (const [name, redisUrl] of limiters) {
    test(`early consume on PostgreSQL (${name}): a token revoked or an account suspended elsewhere is refused on the next request and not counted`, async (t) => {
      const { get, token, email, operator, accounts } = await setUp(t, url, redisUrl, 'free');
      const other = await accounts.createToken(email, 'to revoke');
      for (let i = 1; i <= 3; i++) {
        const res = await get(other.token);
        assert.equal(res.statusCode, 200);
        assert.equal(remaining(res), 10 - i, 'the free plan: 10 a minute');
      }

      await operator.revokeToken(other.id);
      const revoked = await get(other.token);
      assert.equal(revoked.statusCode, 401);
      assert.match(revoked.json().message, /revoked/);
      // The refused request took nothing from the account's windows.
      assert.equal(remaining(await get(token)), 6);

      await operator.setStatus(email, 'suspended');
      assert.equal((await get(token)).statusCode, 403);
      await operator.setStatus(email, 'active');
      assert.equal(remaining(await get(token)), 5);
      // Refused again and again: still nothing counted, and never a 200.
      for (let i = 0; i < 3; i++) assert.equal((await get(other.token)).statusCode, 401);
      assert.equal(remaining(await get(token)), 4);
    });

    test(`early consume on PostgreSQL (${name}): a plan changed elsewhere applies its own limits on the next request`, async (t) => {
      const { get, token, email, operator } = await setUp(t, url, redisUrl, 'free');
      for (let i = 0; i < 10; i++) assert.equal((await get(token)).statusCode, 200);
      assert.equal((await get(token)).statusCode, 429);

      // Up: refused by the free plan's minute, admitted by pro's.
      await operator.setPlan(email, 'pro');
      const up = await get(token);
      assert.equal(up.statusCode, 200);
      assert.equal(up.headers['x-ratelimit-limit'], '60');
      assert.equal(remaining(up), 60 - 11);
      for (let i = 0; i < 4; i++) assert.equal((await get(token)).statusCode, 200);

      // Down: admitted by pro's minute (15 of 60), refused by free's (10), and that request not counted.
      await operator.setPlan(email, 'free');
      const down = await get(token);
      assert.equal(down.statusCode, 429);
      assert.equal(down.headers['x-ratelimit-limit'], '10');
      await operator.setPlan(email, 'pro');
      assert.equal(remaining(await get(token)), 60 - 16);
    });
  }

  test('early consume on PostgreSQL: a limiter that fails before the token is checked fails the request, as it would after', async (t) => {
    const failing: RateLimiter = {
      consume: () => Promise.reject(new Error('the limiter is down')),
      peek: () => Promise.reject(new Error('the limiter is down')),
      refund: async () => undefined,
      close: async () => {},
    };
    const unhandled: unknown[] = [];
    const onUnhandled = (err: unknown) => unhandled.push(err);
    process.on('unhandledRejection', onUnhandled);
    t.after(() => process.off('unhandledRejection', onUnhandled));
    const { get, token } = await setUp(t, url, undefined, 'free', failing);
    for (let i = 0; i < 3; i++) assert.equal((await get(token)).statusCode, 500);
    // A rejection nobody handled is reported once the microtasks have run: a turn of the loop later.
    await new Promise((resolve) => setImmediate(resolve));
    assert.deepEqual(unhandled, []);
  });
}
