import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { test } from 'node:test';
import { Redis } from 'ioredis';
import { BULLMQ_QUEUE_NAME, BullMqJobQueue } from '../../../src/infra/jobs/bullmq.js';
import type { JobRunner } from '../../../src/domain/jobs/queue.js';
import { eventually } from '../../helpers/eventually.js';
import { sqliteStoreWithAccount } from '../store/backends.js';

/**
 * A worker that paused past its BullMQ lock (a long GC, a stopped VM) finds, when its run ends,
 * that BullMQ took the job back: an expected recovery (the job runs again), reported through
 * onRecovered (the app logs it as a warning), never as an error.
 */
const TEST_REDIS_URL = process.env.TEST_REDIS_URL;

test('a lost BullMQ lock is reported as a recovery, not as an error', { skip: TEST_REDIS_URL ? false : 'set TEST_REDIS_URL', timeout: 60_000 }, async (t) => {
  const redisUrl = TEST_REDIS_URL!;
  const { store, account } = await sqliteStoreWithAccount(t);
  const prefix = `netdiag-test:${process.pid}:${randomBytes(4).toString('hex')}`;
  const errors: unknown[] = [];
  const recovered: unknown[] = [];
  const queue = new BullMqJobQueue({ redisUrl, repo: store.jobs, workers: 1, prefix, onError: (err) => errors.push(err), onRecovered: (err) => recovered.push(err) });
  const redis = new Redis(redisUrl);
  let release: (() => void) | undefined;
  t.after(async () => {
    release?.();
    await queue.close();
    const keys = await redis.keys(`${prefix}:*`);
    if (keys.length > 0) await redis.del(...keys);
    redis.disconnect();
  });
  const runner: JobRunner = {
    admit: async () => () => undefined,
    run: () => new Promise<void>((resolve) => (release = resolve)),
  };
  const id = `job_${'0'.repeat(20)}lost`;
  await store.jobs.create({ id, account_id: account.id, endpoint: '/port/scan', body: '{}', webhook_url: null, progress_total: 1, created_at: new Date().toISOString() });
  queue.start(runner);
  await queue.enqueue(id);
  await eventually(() => release !== undefined, { timeoutMs: 10_000 });
  assert.ok(release, 'the job runs');
  // The worker "paused": its lock lapsed and BullMQ's stalled check took the job back.
  assert.equal(await redis.del(`${prefix}:${BULLMQ_QUEUE_NAME}:${id}:lock`), 1);
  release();
  await eventually(() => recovered.length > 0, { timeoutMs: 10_000 });
  assert.match(String(recovered[0]), /lock for job/);
  assert.deepEqual(errors, []);
});
