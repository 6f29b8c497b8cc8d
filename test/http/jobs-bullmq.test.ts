import { randomBytes } from 'node:crypto';
import { after, test } from 'node:test';
import { Redis } from 'ioredis';
import { BullMqJobQueue } from '../../src/infra/jobs/bullmq.js';
import { TEST_DATABASE_URL, postgresBackend } from '../infra/store/backends.js';
import { jobEngineSuite } from './jobs-suite.js';
import { JobCancelledError } from '../../src/errors.js';

/**
 * The shared job engine suite on BullMQ (REDIS_URL) with PostgreSQL: every test has a queue
 * (key prefix) of its own, so parallel test files never share one; only those keys are removed
 * afterwards, the shared Redis is never flushed.
 */
const TEST_REDIS_URL = process.env.TEST_REDIS_URL;

if (!TEST_DATABASE_URL || !TEST_REDIS_URL) {
  test('jobs (bullmq, postgres)', { skip: 'set TEST_DATABASE_URL (PostgreSQL) and TEST_REDIS_URL (Redis) to run the job engine suite on BullMQ' }, () => undefined);
} else {
  const dbUrl = TEST_DATABASE_URL;
  const redisUrl = TEST_REDIS_URL;
  const prefixes: string[] = [];
  let prefix = '';
  after(async () => {
    const redis = new Redis(redisUrl);
    for (const p of prefixes) {
      let cursor = '0';
      do {
        const [next, keys] = await redis.scan(cursor, 'MATCH', `${p}:*`, 'COUNT', 500);
        cursor = next;
        if (keys.length > 0) await redis.del(...keys);
      } while (cursor !== '0');
    }
    redis.disconnect();
  });
  jobEngineSuite({
    name: 'bullmq, postgres',
    // One harness per test: a fresh queue prefix with it, shared by the test's apps.
    backend: () => {
      prefix = `netdiag-test:${process.pid}:${randomBytes(4).toString('hex')}`;
      prefixes.push(prefix);
      return postgresBackend(dbUrl);
    },
    deps: (store, config, renewMs) => ({
      jobQueue: new BullMqJobQueue({ redisUrl, repo: store.jobs, workers: config.workers, prefix, renewMs, cancelReason: () => new JobCancelledError() }),
    }),
  });
}
