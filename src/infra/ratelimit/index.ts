import { MemoryRateLimiter } from './memory.js';
import { RedisRateLimiter, type RedisRateLimiterOptions } from './redis.js';
import type { RateLimiter } from '../../domain/usage/rate-limit.js';

/**
 * Redis when REDIS_URL is set (shared by several instances), else in-process. Either way a
 * window the limiter has not seen (after a restart, or a Redis that restarted empty) starts from
 * the recorded usage, `seed`; while Redis is away each instance limits by itself, seeded the same.
 * On Redis, the calls of an instance killed before recording them are given back (`recordsCallsOf`).
 */
export function createRateLimiter(redisUrl: string | undefined, opts: RedisRateLimiterOptions = {}): RateLimiter {
  return redisUrl ? new RedisRateLimiter(redisUrl, opts) : new MemoryRateLimiter(opts.seed);
}
