import assert from 'node:assert/strict';
import { test } from 'node:test';
import type { FastifyInstance } from 'fastify';
import { composeApp } from '../../../src/compose-app.js';
import { loadConfig } from '../../../src/config.js';
import { AccountService } from '../../../src/domain/accounts/service.js';
import type { JobView } from '../../../src/domain/jobs/types.js';
import { BULLMQ_PREFIX, BULLMQ_QUEUE_NAME } from '../../../src/infra/jobs/bullmq.js';
import { Redis } from 'ioredis';
import { createDialer } from '../../../src/infra/net/dialer.js';
import { hangingConnect } from '../net/fixtures/connect-spy.js';
import { eventually } from '../../helpers/eventually.js';
import type { Store } from '../../../src/domain/store.js';
import { sqliteBackend } from '../store/backends.js';
import { freePort } from '../../helpers/free-port.js';
import { hasRedisServer, startRedisServer } from '../../helpers/redis-server.js';

/**
 * Two processes' worth of apps on one database and one Redis (REDIS_URL: the app builds the
 * BullMQ queue and the Redis work-in-flight slots itself). A free account runs 2 jobs at once in
 * all of them together: the third waits queued (delayed in BullMQ), and runs when one is cancelled.
 * The Redis is a redis-server of this test's own (the queue and slot keys are the defaults).
 */
const noRedis = !hasRedisServer ? 'needs redis-server (the test starts one of its own)' : false;

test("per-account work in flight holds across BullMQ workers: a free account's third job waits, then runs", { skip: noRedis, timeout: 60_000 }, async (t) => {
  const port = await freePort();
  const redisUrl = `redis://127.0.0.1:${port}/0`;
  const backend = sqliteBackend();
  const stores: Store[] = [];
  // Torn down in order: the apps, their stores, then Redis (its hook is added after this one, and
  // hooks run in the order they were added).
  const apps: FastifyInstance[] = [];
  t.after(async () => {
    for (const app of apps) await app.close();
    for (const s of stores) await s.close();
    await backend.drop();
  });
  await startRedisServer(t, port);

  stores.push(await backend.open(), await backend.open());
  const { token } = await new AccountService(stores[0]!).createAccount({ email: 'f@example.com', name: 'F', plan: 'free' });
  const hanging = [hangingConnect(), hangingConnect()];
  for (const [i, store] of stores.entries()) {
    const config = loadConfig({ DATABASE_URL: 'sqlite::memory:', REDIS_URL: redisUrl, NETDIAG_DNS_SERVERS: '127.0.0.1:1', NETDIAG_ALLOW_TARGETS: '127.0.0.0/8' });
    const dialer = createDialer({ allowTargets: ['127.0.0.0/8'], dnsServers: [{ host: '127.0.0.1', port: 1 }] }, { connectFn: hanging[i]!.fn });
    const app = await composeApp({ config, store, logger: false, dialer });
    apps.push(app);
    await app.ready();
  }
  const auth = { authorization: `Bearer ${token}` };
  const jobs: JobView[] = [];
  for (const p of [1, 2, 3]) {
    const res = await apps[p % 2]!.inject({ method: 'POST', url: '/api/port/scan', headers: { ...auth, prefer: 'respond-async' }, payload: { host: '127.0.0.1', port: p, timeout: 30 } });
    assert.equal(res.statusCode, 202, res.body);
    jobs.push((res.json() as { data: JobView }).data);
  }
  const dialled = () => hanging[0]!.sockets.length + hanging[1]!.sockets.length;
  await eventually(() => dialled() >= 2, { timeoutMs: 20_000 });
  // A worker took the third turn and put it off (BullMQ's delayed set): the account is at its limit.
  const redis = new Redis(redisUrl);
  try {
    await eventually(() => redis.zcard(`${BULLMQ_PREFIX}:${BULLMQ_QUEUE_NAME}:delayed`), (n) => n >= 1, { timeoutMs: 20_000, what: 'a turn put off' });
  } finally {
    redis.disconnect();
  }
  assert.equal(dialled(), 2, 'two jobs dial between both apps, the third waits');
  const statuses = async () => Promise.all(jobs.map(async (j) => (await stores[0]!.jobs.find(j.id))!.status));
  assert.deepEqual((await statuses()).sort(), ['queued', 'running', 'running']);

  const runningIdx = (await statuses()).indexOf('running');
  const del = await apps[0]!.inject({ method: 'DELETE', url: `/api/jobs/${jobs[runningIdx]!.id}`, headers: auth });
  assert.equal(del.statusCode, 200);
  // Given up before the running scans' 30 s timeout: only the cancel frees a slot by then.
  await eventually(() => dialled() >= 3, { timeoutMs: 20_000 });
  assert.equal(dialled(), 3, 'the waiting job runs once a slot is free');
  assert.deepEqual((await statuses()).sort(), ['cancelled', 'running', 'running']);
  // The apps then close with nothing running (a run handed between two closing apps is the
  // shutdown test's business, not this one's).
  for (const j of jobs) await apps[0]!.inject({ method: 'DELETE', url: `/api/jobs/${j.id}`, headers: auth });
});
