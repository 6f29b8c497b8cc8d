import assert from 'node:assert/strict';
import { test } from 'node:test';
import type { FastifyInstance } from 'fastify';
import { composeApp } from '../../src/compose-app.js';
import { loadConfig } from '../../src/config.js';
import { AccountService } from '../../src/domain/accounts/service.js';
import { PLANS } from '../../src/domain/accounts/plans.js';
import { build } from '../helpers/build.js';
import { TEST_DATABASE_URL, postgresBackend } from '../infra/store/backends.js';

/**
 * docs/api.md, Rate limits: "A request that carries a valid token is judged by its account's windows
 * alone: what its address spent without a token never refuses it", while requests without a
 * valid token stay limited per address at the free plan's figures.
 */

const ANONYMOUS_PER_MINUTE = PLANS.free.requests_per_minute;
const DAY_MS = 86_400_000;
/** A minute of its own per test in this process (the shared Redis may hold other runs' counts). */
let tests = 0;
const unknownToken = `nd_${'Q'.repeat(40)}`;

type Get = (token: string | null) => Promise<{ status: number; limit: string | undefined; message: string }>;

function getter(app: FastifyInstance): Get {
  return async (token) => {
    const res = await app.inject({ method: 'GET', url: '/api/user', headers: token === null ? {} : { authorization: `Bearer ${token}` } });
    return { status: res.statusCode, limit: res.headers['x-ratelimit-limit'] as string | undefined, message: String(res.json().message) };
  };
}

/** The address spends its anonymous minute (and one more, refused); then each instance is asked with the valid token. */
async function validTokenIsNotLockedOut(spend: Get, instances: Get[], token: string): Promise<void> {
  const anonymous: number[] = [];
  for (let i = 0; i <= ANONYMOUS_PER_MINUTE; i++) anonymous.push((await spend(null)).status);
  assert.deepEqual(anonymous, [...Array(ANONYMOUS_PER_MINUTE).fill(401), 429], 'token-less requests are limited per address');
  for (const get of instances) {
    // Twice each: a token the instance has not seen yet, then one it has (cached).
    for (let i = 0; i < 2; i++) {
      const res = await get(token);
      assert.equal(res.status, 200, `a valid token from a limited address: ${res.message}`);
      assert.equal(res.limit, String(PLANS.enterprise.requests_per_minute), "judged by the account's windows");
    }
    // An unknown token from the same address is still limited as the address.
    const guess = await get(unknownToken);
    assert.equal(guess.status, 429);
    assert.match(guess.message, /without a valid API token/);
  }
}

test('SQLite: a valid token is not refused by what its address spent without a token', async (t) => {
  const { app, token } = await build(t);
  const get = getter(app);
  await validTokenIsNotLockedOut(get, [get], token);
});

if (!TEST_DATABASE_URL || !process.env.TEST_REDIS_URL) {
  test('PostgreSQL + Redis: skipped because TEST_DATABASE_URL or TEST_REDIS_URL is unset', { skip: 'TEST_DATABASE_URL or TEST_REDIS_URL is unset' }, () => {});
} else {
  const url = TEST_DATABASE_URL;
  const redisUrl = process.env.TEST_REDIS_URL;
  test('PostgreSQL + Redis, two instances: a valid token is not refused by what its address spent without a token', async (t) => {
    const at = Date.UTC(2002, 0, 1, 12, 0, 30) + ((process.pid % 1000) * 8 + tests++) * DAY_MS;
    const clock = () => new Date(at);
    const backend = postgresBackend(url);
    const config = loadConfig({ DATABASE_URL: url, NETDIAG_DNS_SERVERS: '127.0.0.1:1', REDIS_URL: redisUrl });
    const stores = [await backend.open(), await backend.open()];
    const apps = await Promise.all(stores.map((store) => composeApp({ config, store, logger: false, clock })));
    t.after(async () => {
      for (const app of apps) await app.close();
      for (const store of stores) await store.close();
      await backend.drop();
    });
    const { token } = await new AccountService(stores[0]!, clock).createAccount({ email: `${backend.schema}@example.com`, name: 'NAT', plan: 'enterprise' });
    const [a, b] = apps.map(getter);
    await validTokenIsNotLockedOut(a!, [b!, a!], token);
  });
}
