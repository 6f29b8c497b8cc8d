import { MemoryRateLimiter } from './memory.js';
import { RedisRateLimiter } from './redis.js';
import type { RateLimiter } from './limiter.js';

export type { RateLimiter } from './limiter.js';

/** Redis when REDIS_URL is set (shared by several instances), else in-process. */
export function createRateLimiter(redisUrl: string | undefined): RateLimiter {
  return redisUrl ? new RedisRateLimiter(redisUrl) : new MemoryRateLimiter();
}
