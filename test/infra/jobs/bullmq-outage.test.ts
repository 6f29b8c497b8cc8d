import assert from 'node:assert/strict';
import { test } from 'node:test';
import { composeApp } from '../../../src/compose-app.js';
import { loadConfig } from '../../../src/config.js';
import { AccountService } from '../../../src/domain/accounts/service.js';
import type { JobView } from '../../../src/domain/jobs/types.js';
import { Redis } from 'ioredis';
import { BullMqJobQueue } from '../../../src/infra/jobs/bullmq.js';
import { sqliteBackend, sqliteStoreWithAccount } from '../store/backends.js';
import { freePort } from '../../helpers/free-port.js';
import { hasRedisServer, startRedisServer } from '../../helpers/redis-server.js';
import { eventually } from '../../helpers/eventually.js';
import { JobCancelledError } from '../../../src/errors.js';

// own process: redis-servers it starts and kills (scripts/test-tree.mjs).

/**
 * Redis unreachable when a job is created (docs/jobs.md): the job is still accepted (202, queued
 * in the database), nothing crashes, and it runs once Redis answers (the sweep adds it). The
 * Redis is a redis-server of this test's own, started only halfway through.
 */

const noRedis = !hasRedisServer ? 'needs redis-server (the test starts one of its own)' : false;

test('Redis down at job creation: 202 at once, the job waits queued in the database, and runs once Redis is up', { skip: noRedis, timeout: 60_000 }, async (t) => {
  const port = await freePort();
  const redisUrl = `redis://127.0.0.1:${port}/0`;
  const backend = sqliteBackend();
  const store = await backend.open();
  t.after(async () => {
    await store.close();
    await backend.drop();
  });
  const { token } = await new AccountService(store).createAccount({ email: 'o@example.com', name: 'O', plan: 'enterprise' });
  const errors: unknown[] = [];
  const config = loadConfig({ DATABASE_URL: 'sqlite::memory:', NETDIAG_DNS_SERVERS: '127.0.0.1:1', NETDIAG_ALLOW_TARGETS: '127.0.0.0/8' });
  const queue = new BullMqJobQueue({ redisUrl, repo: store.jobs, workers: 2, sweepMs: 200, cancelReason: () => new JobCancelledError(), onError: (err) => errors.push(err) });
  const app = await composeApp({ config, store, logger: false, jobQueue: queue });
  t.after(() => app.close());
  await app.ready();

  // The 202 comes while Redis is still down (it is started below): the enqueue gives up after
  // BULLMQ_ENQUEUE_TIMEOUT_MS instead of waiting for Redis; one that waited would never answer
  // before the test's own timeout.
  const res = await app.inject({ method: 'POST', url: '/api/ipv6/expand', headers: { authorization: `Bearer ${token}`, prefer: 'respond-async' }, payload: { ipv6: '::1' } });
  assert.equal(res.statusCode, 202, res.body);
  const job = (res.json() as { data: JobView }).data;
  const message = (err: unknown) => (err instanceof Error ? err.message : String(err));
  await eventually(() => errors.some((err) => /^enqueue: Redis did not answer within/.test(message(err))), { what: 'the enqueue given up on, and reported to the log' });
  // A round of the sweep (every 200 ms, each waiting up to 5 s for Redis) found the job and gave
  // up adding it, reported to the log: still nothing can run it.
  await eventually(() => errors.some((err) => /^sweep: Redis did not answer within/.test(message(err))), { timeoutMs: 20_000, what: 'a round of the sweep given up on' });
  assert.equal((await store.jobs.find(job.id))?.status, 'queued', 'kept queued while Redis is down');

  await startRedisServer(t, port);
  const status = await eventually(async () => (await store.jobs.find(job.id))?.status ?? 'gone', (st) => st === 'succeeded', { timeoutMs: 20_000, intervalMs: 100, what: 'the job to run' });
  assert.equal(status, 'succeeded', 'run once Redis answers');
  const done = await app.inject({ url: `/api/jobs/${job.id}`, headers: { authorization: `Bearer ${token}` } });
  assert.equal((done.json() as { data: JobView }).data.result && typeof (done.json() as { data: JobView }).data.result, 'object');
});

test('Redis going away and coming back is reported once each through onRedis, never as an error', { skip: noRedis, timeout: 60_000 }, async (t) => {
  const port = await freePort();
  const redisUrl = `redis://127.0.0.1:${port}/0`;
  const { store } = await sqliteStoreWithAccount(t);
  const first = await startRedisServer(t, port);
  const errors: unknown[] = [];
  const states: string[] = [];
  const queue = new BullMqJobQueue({ redisUrl, repo: store.jobs, workers: 1, onError: (err) => errors.push(err), onRedis: (state) => states.push(state) });
  t.after(() => queue.close());
  queue.start({ admit: async () => () => undefined, run: async () => undefined });
  await queue.connected();
  first.kill('SIGKILL');
  await eventually(() => states.length > 0, { timeoutMs: 10_000 });
  assert.deepEqual(states, ['lost']);
  await startRedisServer(t, port);
  await eventually(() => states.includes('back'), { timeoutMs: 15_000 });
  assert.deepEqual(states, ['lost', 'back'], 'one line for the outage and one for the recovery, however many connections retried');
  assert.deepEqual(errors, [], 'an expected outage is not an error');
});

test('closing right as Redis comes back leaves no late rejection behind', { skip: noRedis, timeout: 60_000 }, async (t) => {
  // BullMQ 5 let a connection's failed initialization (Redis just back, its INFO still in flight)
  // escape as an unhandled rejection once the queue was closed: it ended a process shut down
  // right after an outage. Created while Redis is down, each queue is closed the moment Redis is back.
  const rejections: unknown[] = [];
  const onRejection = (err: unknown) => rejections.push(err);
  process.on('unhandledRejection', onRejection);
  t.after(() => process.off('unhandledRejection', onRejection));
  const { store } = await sqliteStoreWithAccount(t);
  for (let round = 0; round < 8; round++) {
    const port = await freePort();
    const states: string[] = [];
    const queue = new BullMqJobQueue({ redisUrl: `redis://127.0.0.1:${port}/0`, repo: store.jobs, workers: 1, onError: () => undefined, onRedis: (state) => states.push(state) });
    queue.start({ admit: async () => () => undefined, run: async () => undefined });
    await eventually(() => states.includes('lost'), { timeoutMs: 10_000 });
    const redis = await startRedisServer(t, port);
    await eventually(() => states.includes('back'), { timeoutMs: 15_000, intervalMs: 1 });
    await queue.close();
    // The connections' sockets close after close() returns: once Redis has seen every one of
    // them go (the one left is the look's own), their late failures have surfaced, a turn later.
    const admin = new Redis(`redis://127.0.0.1:${port}/0`);
    await eventually(async () => (await admin.client('LIST')) as string, (list) => list.trim().split('\n').length === 1, { what: "the queue's connections gone" });
    admin.disconnect();
    await new Promise((resolve) => setImmediate(resolve));
    redis.kill('SIGKILL');
  }
  assert.deepEqual(rejections, []);
});

test('a command lost as Redis dies (sent, never answered) is an outage, not an error', { skip: noRedis, timeout: 60_000 }, async (t) => {
  const port = await freePort();
  const { store } = await sqliteStoreWithAccount(t);
  const redis = await startRedisServer(t, port);
  const errors: unknown[] = [];
  const states: string[] = [];
  const queue = new BullMqJobQueue({ redisUrl: `redis://127.0.0.1:${port}/0`, repo: store.jobs, workers: 0, onError: (err) => errors.push(err), onRedis: (state) => states.push(state) });
  t.after(() => queue.close());
  await queue.connected();
  // Redis stops answering, so the job id sent next is still in flight when Redis dies.
  const admin = new Redis(`redis://127.0.0.1:${port}/0`);
  await admin.call('CLIENT', 'PAUSE', '10000', 'ALL');
  admin.disconnect();
  const enqueued = queue.enqueue('a-job-id');
  redis.kill('SIGKILL');
  await enqueued;
  assert.deepEqual(errors, [], 'a lost command is part of the outage');
  assert.deepEqual(states, ['lost']);
});
