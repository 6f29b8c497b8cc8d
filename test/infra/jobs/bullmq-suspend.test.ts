import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { test } from 'node:test';
import { Redis } from 'ioredis';
import { AccountService } from '../../../src/domain/accounts/service.js';
import { BullMqJobQueue } from '../../../src/infra/jobs/bullmq.js';
import { cancelsPublished } from '../../../src/infra/jobs/index.js';
import type { JobRunner } from '../../../src/domain/jobs/queue.js';
import { eventually } from '../../helpers/eventually.js';
import { sqliteStoreWithAccount } from '../store/backends.js';

/**
 * `netdiag account suspend` runs no queue: with REDIS_URL it publishes the ids of the jobs the
 * suspension cancelled, as a DELETE does, and the worker running one aborts it at once. The
 * worker here renews its lease only every minute, so nothing but that message can stop the run
 * within the test. A key prefix of the test's own, removed afterwards (the CLI uses the default).
 */
const TEST_REDIS_URL = process.env.TEST_REDIS_URL;

test('a suspension from the CLI stops the account\'s job running in a BullMQ worker at once', { skip: TEST_REDIS_URL ? false : 'set TEST_REDIS_URL', timeout: 60_000 }, async (t) => {
  const redisUrl = TEST_REDIS_URL!;
  const { store, account } = await sqliteStoreWithAccount(t);
  const prefix = `netdiag-test:${process.pid}:${randomBytes(4).toString('hex')}`;
  const worker = new BullMqJobQueue({ redisUrl, repo: store.jobs, workers: 1, renewMs: 60_000, prefix });
  const redis = new Redis(redisUrl);
  const id = `job_${'0'.repeat(17)}suspend`;
  let signal: AbortSignal | undefined;
  t.after(async () => {
    await worker.close();
    const keys = await redis.keys(`${prefix}:*`);
    if (keys.length > 0) await redis.del(...keys);
    redis.disconnect();
  });
  const runner: JobRunner = {
    admit: async () => () => undefined,
    run: (_job, _holder, s) => {
      signal = s;
      return new Promise<void>((resolve) => s.addEventListener('abort', () => resolve(), { once: true }));
    },
  };
  await store.jobs.create({ id, account_id: account.id, endpoint: '/port/scan', body: '{}', webhook_url: null, progress_total: 1, created_at: new Date().toISOString() });
  worker.start(runner);
  await worker.enqueue(id);
  await eventually(() => signal !== undefined, { timeoutMs: 10_000 });
  assert.ok(signal, 'the worker runs the job');
  await cancelsPublished({ redisUrl }, store, (onJobsCancelled) => new AccountService(store, undefined, { onJobsCancelled }).setStatus(account.email, 'suspended'), { prefix });
  assert.equal((await store.jobs.find(id))?.status, 'cancelled');
  // Given up long before the minute's renewal: only the message can have aborted it by then.
  await eventually(() => signal!.aborted, { timeoutMs: 20_000 });
  assert.ok(signal!.aborted, 'the run was told at once, not at a lease renewal');
});
