import { RateLimitError } from '../../errors.js';
import { MemoryRateLimiter } from '../../infra/ratelimit/memory.js';
import type { RateLimiter, WindowLimits } from '../../infra/ratelimit/limiter.js';
import { isPromise } from '../../maybe-promise.js';

/**
 * Password guessing is slowed per client address and per e-mail address, in the API's limiter
 * (so on Redis every instance counts together), under keys no account key can take. A person
 * who mistypes a few times never meets these; a script trying passwords meets them at once.
 */
export const LOGIN_LIMITS = {
  perAddress: { minute: 10, hour: 60, day: 300 },
  perEmail: { minute: 5, hour: 20, day: 50 },
  /** Sign-ups and one-time-link forms, per client address. */
  signupPerAddress: { minute: 5, hour: 20, day: 50 },
} as const satisfies Record<string, WindowLimits>;

export class Throttle {
  private readonly limiter: RateLimiter;

  constructor(limiter: RateLimiter | null) {
    this.limiter = limiter ?? new MemoryRateLimiter();
  }

  /** Counts one attempt under `key`; a RateLimitError (429 page) when a window is full. */
  async attempt(key: string, limits: WindowLimits, now: number, what: string): Promise<void> {
    const pending = this.limiter.consume(`page:${key}`, limits, now);
    const decision = isPromise(pending) ? await pending : pending;
    if (decision.allowed) return;
    const retryS = Math.max(1, Math.ceil(((decision.exceeded?.resetAt ?? now + 60_000) - now) / 1000));
    throw new RateLimitError(`Too many ${what} attempts. Wait ${retryS} seconds and try again.`, { retry_after_s: retryS }, { 'retry-after': String(retryS) });
  }
}
