import { test } from 'node:test';
import { RedisRateLimiter } from '../../../src/infra/ratelimit/redis.js';
import { rateLimiterSuite } from './suite.js';

const url = process.env.TEST_REDIS_URL;
if (!url) {
  test('redis rate limiter: skipped because TEST_REDIS_URL is unset (.ci/run sets it)', { skip: 'TEST_REDIS_URL is unset' }, () => {});
} else {
  rateLimiterSuite(
    'redis',
    async () => new RedisRateLimiter(url),
    async () => new RedisRateLimiter(url),
    async (seed) => new RedisRateLimiter(url, { seed }),
  );
}
