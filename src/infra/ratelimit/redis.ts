import { Redis } from 'ioredis';
import { WINDOWS, WINDOW_MS, decide, windowStart, type Decision, type RateLimiter, type WindowLimits, type WindowState } from './limiter.js';

/** Every key of this service starts with this, so one Redis can serve other things too. */
export const REDIS_KEY_PREFIX = 'netdiag:rl:';
/** How long a key outlives its window, so instances whose clocks are a little apart still agree. */
export const REDIS_KEY_GRACE_MS = 60_000;
/** Keys asked for per SCAN step when flushing. */
export const REDIS_SCAN_COUNT = 1_000;
/** How long a Redis command may take before the request fails instead of hanging. */
export const REDIS_COMMAND_TIMEOUT_MS = 2_000;

// Check all three windows and count in all three, or in none: one script, so several server
// instances sharing the Redis admit exactly min(N, limit) between them.
const CONSUME = `
local counts = {}
for i = 1, 3 do counts[i] = tonumber(redis.call('GET', KEYS[i]) or '0') end
if counts[1] < tonumber(ARGV[1]) and counts[2] < tonumber(ARGV[2]) and counts[3] < tonumber(ARGV[3]) then
  for i = 1, 3 do
    counts[i] = redis.call('INCR', KEYS[i])
    redis.call('PEXPIRE', KEYS[i], ARGV[3 + i])
  end
  return {1, counts[1], counts[2], counts[3]}
end
return {0, counts[1], counts[2], counts[3]}
`;

export class RedisRateLimiter implements RateLimiter {
  private readonly redis: Redis;

  constructor(url: string) {
    this.redis = new Redis(url, { commandTimeout: REDIS_COMMAND_TIMEOUT_MS, maxRetriesPerRequest: 1, lazyConnect: false });
    this.redis.defineCommand('ndConsume', { numberOfKeys: 3, lua: CONSUME });
  }

  private keys(key: string, now: number): string[] {
    // The hash tag keeps one client's three keys in one slot on a Redis Cluster.
    return WINDOWS.map((w) => `${REDIS_KEY_PREFIX}{${key}}:${w}:${windowStart(w, now)}`);
  }

  async consume(key: string, limits: WindowLimits, now: number): Promise<Decision> {
    // Relative expiries, from the caller's clock (tests run in the past).
    const expiries = WINDOWS.map((w) => windowStart(w, now) + WINDOW_MS[w] - now + REDIS_KEY_GRACE_MS);
    const run = (this.redis as unknown as { ndConsume: (...args: Array<string | number>) => Promise<number[]> }).ndConsume;
    const [allowed, ...counts] = await run.call(this.redis, ...this.keys(key, now), limits.minute, limits.hour, limits.day, ...expiries);
    return decide(allowed === 1, counts.map(Number), limits, now);
  }

  async peek(key: string, limits: WindowLimits, now: number): Promise<WindowState[]> {
    const values = await this.redis.mget(...this.keys(key, now));
    return decide(true, values.map((v) => Number(v ?? 0)), limits, now).windows;
  }

  /** For tests: forget every counter of this service. */
  async flush(): Promise<void> {
    let cursor = '0';
    do {
      const [next, keys] = await this.redis.scan(cursor, 'MATCH', `${REDIS_KEY_PREFIX}*`, 'COUNT', REDIS_SCAN_COUNT);
      cursor = next;
      if (keys.length > 0) await this.redis.del(...keys);
    } while (cursor !== '0');
  }

  async close(): Promise<void> {
    await this.redis.quit().catch(() => this.redis.disconnect());
  }
}
