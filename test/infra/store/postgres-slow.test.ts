import assert from 'node:assert/strict';
import { test } from 'node:test';
import Fastify from 'fastify';
import pg from 'pg';
import { openPostgresStore } from '../../../src/infra/store/postgres.js';
import { healthRoutes } from '../../../src/http/routes/health.js';
import { CircuitBreaker, PG_BREAKER_OPEN_MS, PG_UNRESPONSIVE_MS } from '../../../src/infra/store/pg-availability.js';
import { startDelayProxy } from '../../helpers/delay-proxy.js';
import { DatabaseSlowError, DatabaseUnavailableError } from '../../../src/errors.js';
import type { Store } from '../../../src/domain/store.js';
import { eventually } from '../../helpers/eventually.js';

/**
 * PostgreSQL slow but alive (every byte held a while by a loopback proxy, as on a loaded machine)
 * is not an outage: /readyz stays 200 on fresh connections that take over a second to open. A
 * database that goes away answers 503, and /readyz is 200 again once it is back.
 */

/** Each chunk's delay each way: opening a connection takes over 1 s (the former connect timeout). */
const SLOW_MS = 700;
/** /readyz sent at once while slow: below PG_POOL_SIZE, above the connections opened before. */
const AT_ONCE = 8;

test('pg breaker: timeouts open it only after PG_UNRESPONSIVE_MS without a success; a refusal opens it at once', () => {
  let now = 1_000_000;
  const breaker = new CircuitBreaker(PG_BREAKER_OPEN_MS, () => now);
  const timeout = new Error('Connection terminated due to connection timeout');
  assert.equal(breaker.timedOut(timeout), false);
  now += PG_UNRESPONSIVE_MS - 1;
  assert.equal(breaker.timedOut(timeout), false, 'slow, not gone');
  assert.equal(breaker.available, true);
  breaker.succeeded();
  now += PG_UNRESPONSIVE_MS - 1;
  assert.equal(breaker.timedOut(timeout), false, 'a success starts the count again');
  now += 1;
  assert.equal(breaker.timedOut(timeout), true, 'nothing answered for PG_UNRESPONSIVE_MS: gone');
  assert.equal(breaker.available, false);
  breaker.succeeded();
  breaker.failed(Object.assign(new Error('connect ECONNREFUSED'), { code: 'ECONNREFUSED' }));
  assert.equal(breaker.available, false, 'a refusal opens it at once');
});

test('/readyz: a database that timed out while not judged gone is "slow" (200); one judged gone is 503', async (t) => {
  let failure: Error = new DatabaseSlowError(new Error('timeout exceeded when trying to connect'));
  const store = { ping: async () => Promise.reject(failure) } as unknown as Store;
  const app = Fastify();
  await healthRoutes(app, store);
  t.after(() => app.close());
  const slow = await app.inject({ url: '/readyz' });
  assert.deepEqual({ status: slow.statusCode, body: slow.json() as unknown }, { status: 200, body: { status: 'ready', database: 'slow' } });
  failure = new DatabaseUnavailableError(new Error('connect ECONNREFUSED 127.0.0.1:5432'));
  const down = await app.inject({ url: '/readyz' });
  assert.deepEqual({ status: down.statusCode, body: down.json() as unknown, retry: down.headers['retry-after'] }, { status: 503, body: { status: 'database unavailable', database: 'unreachable' }, retry: '1' });
});

const pgUrl = process.env.TEST_DATABASE_URL;
if (!pgUrl) {
  test('slow PostgreSQL: skipped because TEST_DATABASE_URL is unset', { skip: 'TEST_DATABASE_URL is unset' }, () => {});
} else {
  test('a slow PostgreSQL keeps /readyz at 200; a dead one is 503 and /readyz recovers once it is back', async (t) => {
    const target = new URL(pgUrl);
    const proxy = await startDelayProxy(t, { host: target.hostname, port: Number(target.port || 5432) });
    const viaProxy = new URL(pgUrl);
    viaProxy.hostname = '127.0.0.1';
    viaProxy.port = String(proxy.port);
    const schema = `slow_${process.pid}_${Date.now()}`;
    const store = await openPostgresStore(viaProxy.toString(), { schema });
    const app = Fastify();
    await healthRoutes(app, store);
    t.after(async () => {
      await app.close();
      await store.close();
      const admin = new pg.Client({ connectionString: pgUrl });
      await admin.connect();
      await admin.query(`drop schema if exists "${schema}" cascade`);
      await admin.end();
    });
    const readyz = async () => {
      const res = await app.inject({ url: '/readyz' });
      return { status: res.statusCode, body: res.json() as Record<string, unknown> };
    };
    assert.deepEqual(await readyz(), { status: 200, body: { status: 'ready' } });

    // Slow: more /readyz at once than the pool has connections open, so most of them open one
    // through the delay (within the pool's PG_POOL_SIZE, so none waits for a free one).
    proxy.delayMs = SLOW_MS;
    const slow = await Promise.all(Array.from({ length: AT_ONCE }, readyz));
    assert.deepEqual(
      slow,
      Array(AT_ONCE).fill({ status: 200, body: { status: 'ready' } }),
      `a slow database is no outage: ${JSON.stringify(slow.map((r) => r.body))}`,
    );

    // Gone: connections refused.
    proxy.delayMs = 0;
    await proxy.stop();
    const down = await eventually(readyz, (r) => r.status === 503, { what: '/readyz 503 once the database is gone' });
    assert.deepEqual(down.body, { status: 'database unavailable', database: 'unreachable' });

    // Back: /readyz follows without anything else being asked of the store.
    await proxy.start();
    await eventually(readyz, (r) => r.status === 200, { what: '/readyz 200 once the database is back' });
  });
}
