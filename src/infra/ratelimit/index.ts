import { MemoryRateLimiter, type WindowSeed } from './memory.js';
import { RedisRateLimiter, type LimiterLog } from './redis.js';
import type { RateLimiter } from './limiter.js';

export type { RateLimiter } from './limiter.js';

/**
 * Redis when REDIS_URL is set (shared by several instances), else in-process. Either way a
 * window the limiter has not seen (after a restart, or a Redis that restarted empty) starts from
 * the recorded usage, `seed`; while Redis is away each instance limits by itself, seeded the same.
 */
export function createRateLimiter(redisUrl: string | undefined, seed?: WindowSeed, log?: LimiterLog): RateLimiter {
  return redisUrl ? new RedisRateLimiter(redisUrl, { ...(seed ? { seed } : {}), ...(log ? { log } : {}) }) : new MemoryRateLimiter(seed);
}
