import { MemoryRateLimiter } from '../../src/infra/ratelimit/memory.js';
import type { RateLimiter } from '../../src/domain/usage/rate-limit.js';

/** The real in-process limiter with windows no test fills: for tests whose subject is not a 429. */
export function roomyLimiter(): RateLimiter {
  const inner = new MemoryRateLimiter();
  const big = { minute: 1e9, hour: 1e9, day: 1e9 };
  return { consume: (k, _l, now) => inner.consume(k, big, now), peek: (k, _l, now) => inner.peek(k, big, now), close: () => inner.close() };
}
