import { MemoryRateLimiter, type DaySeed } from './memory.js';
import { RedisRateLimiter } from './redis.js';
import type { RateLimiter } from './limiter.js';

export type { RateLimiter } from './limiter.js';

/**
 * Redis when REDIS_URL is set (shared by several instances, and it keeps the counts across
 * restarts), else in-process, picking the day's counts up from `seedDay` after a restart.
 */
export function createRateLimiter(redisUrl: string | undefined, seedDay?: DaySeed): RateLimiter {
  return redisUrl ? new RedisRateLimiter(redisUrl) : new MemoryRateLimiter(seedDay);
}
