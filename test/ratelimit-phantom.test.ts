import assert from 'node:assert/strict';
import dgram from 'node:dgram';
import { join } from 'node:path';
import { test } from 'node:test';
import { Redis } from 'ioredis';
import { tempDir } from './helpers/build.js';
import { createAccountToken } from './helpers/accounts-cli.js';
import { freePort } from './helpers/free-port.js';
import { hasRedisServer, startRedisServer } from './helpers/redis-server.js';
import { serve, type Served } from './helpers/serve.js';
import { schemaDatabaseUrl } from './helpers/pg-schema.js';
import { REDIS_KEY_PREFIX } from '../src/infra/ratelimit/redis.js';
import { openPostgresStore } from '../src/infra/store/postgres.js';
import { eventually } from './helpers/eventually.js';

// own process: servers it kills (scripts/test-tree.mjs).

/**
 * docs/api.md, Rate limits: "A call an instance admitted but never answered (the instance was killed)
 * does not stay spent: windows are reconciled with the recorded usage, so `api_calls_used` =
 * successful + failed calls recorded, within a minute of the restart." A real `netdiag serve` on
 * PostgreSQL and a Redis of the test's own admits slow calls (a DNS lookup whose server never
 * answers), is killed with SIGKILL while they are in flight, and a new instance starts.
 */

/** Quick calls answered before the slow ones: recorded as successful. */
const QUICK_CALLS = 5;
/** Slow calls in flight at the kill: admitted, never answered, never recorded. */
const SLOW_CALLS = 20;
/** How long convergence may take (a failure message, not a timing bound). */
const CONVERGE_MS = 20_000;
const DAY_MS = 86_400_000;

const pgUrl = process.env.TEST_DATABASE_URL;
if (!pgUrl || !hasRedisServer) {
  test('phantom calls after kill -9: skipped (needs TEST_DATABASE_URL and redis-server)', { skip: 'TEST_DATABASE_URL unset or no redis-server' }, () => {});
} else {
  test('kill -9 with admitted calls in flight: a new instance gives them back, api_calls_used converges to the recorded calls', { timeout: 120_000 }, async (t) => {
    const databaseUrl = await schemaDatabaseUrl(t, pgUrl, 'nd_phantom');
    // Redis: one of the test's own (no other test's account 1 shares its keys).
    const redisPort = await freePort();
    await startRedisServer(t, redisPort);
    const redisUrl = `redis://127.0.0.1:${redisPort}`;
    const redis = new Redis(redisUrl);
    t.after(() => redis.disconnect());
    // A DNS server that never answers: each lookup takes its whole timeout.
    const silent = dgram.createSocket('udp4');
    await new Promise<void>((resolve) => silent.bind(0, '127.0.0.1', resolve));
    t.after(() => silent.close());

    const token = await createAccountToken(databaseUrl, 'phantom@example.com', 'enterprise');
    const env = {
      DATABASE_URL: databaseUrl,
      REDIS_URL: redisUrl,
      NETDIAG_DNS_SERVERS: `127.0.0.1:${silent.address().port}`,
      NETDIAG_RECONCILE_S: '1',
    };
    const dbPath = join(tempDir(t), 'unused.db');
    const headers = { authorization: `Bearer ${token}`, 'content-type': 'application/json' };
    const store = await openPostgresStore(databaseUrl);
    t.after(() => store.close());
    const accountId = (await store.accounts.findByEmail('phantom@example.com'))!.id;
    const dayKey = () => `${REDIS_KEY_PREFIX}{acct:${accountId}}:day:${Date.now() - (Date.now() % DAY_MS)}`;
    const spentInRedis = async () => Number((await redis.get(dayKey())) ?? 0);
    const recordedCalls = async () => {
      const today = new Date().toISOString().slice(0, 10);
      const rows = await store.usage.rows(accountId, today, today);
      return rows.reduce((sum, r) => sum + r.successful + r.failed, 0);
    };

    const first: Served = await serve(dbPath, false, env);
    t.after(() => first.child.kill('SIGKILL'));
    const base1 = `http://127.0.0.1:${first.port}`;
    for (let i = 0; i < QUICK_CALLS; i++) assert.equal((await fetch(`${base1}/api/user`, { headers })).status, 200);
    const slow = Array.from({ length: SLOW_CALLS }, () =>
      fetch(`${base1}/api/dns/lookup`, { method: 'POST', headers, body: JSON.stringify({ domain: 'example.com', type: 'A' }) }).then(
        (r) => r.status,
        () => 'cut off',
      ),
    );
    // Every slow call admitted (spent in Redis), none answered.
    await eventually(spentInRedis, (n) => n >= QUICK_CALLS + SLOW_CALLS, { timeoutMs: CONVERGE_MS, what: 'every slow call admitted' });
    assert.equal(await spentInRedis(), QUICK_CALLS + SLOW_CALLS);
    first.child.kill('SIGKILL');
    await first.exited;
    assert.deepEqual([...new Set(await Promise.all(slow))], ['cut off'], 'no slow call was answered');
    assert.equal(await recordedCalls(), QUICK_CALLS);

    const second = await serve(dbPath, false, env);
    t.after(() => second.child.kill('SIGKILL'));
    await eventually(async () => (await spentInRedis()) === (await recordedCalls()), { timeoutMs: CONVERGE_MS, what: 'Redis to converge to the recorded calls' });
    const spent = await spentInRedis();
    t.diagnostic(`spent in Redis ${spent}, recorded ${await recordedCalls()}`);
    assert.equal(spent, await recordedCalls(), 'the calls admitted and never answered were given back');
    // Through the API: api_calls_used counts this call too, recorded before its answer.
    const user = (await (await fetch(`http://127.0.0.1:${second.port}/api/user`, { headers })).json()) as { data: { api_calls_used: number } };
    assert.equal(user.data.api_calls_used, QUICK_CALLS + 1);
    assert.equal(await recordedCalls(), QUICK_CALLS + 1);
    second.child.kill('SIGTERM');
    await second.exited;
  });
}
