import { RateLimitError } from '../../errors.js';
import type { RateLimiter, WindowLimits } from '../../domain/usage/rate-limit.js';

/**
 * Password guessing is slowed per client address and per e-mail address (per device cookie for a
 * browser that signed in to the account before), in the API's limiter
 * (so on Redis every instance counts together), under keys no account key can take. A person
 * who mistypes a few times never meets these; a script trying passwords meets them at once.
 */
export const LOGIN_LIMITS = {
  perAddress: { minute: 10, hour: 60, day: 300 },
  perEmail: { minute: 5, hour: 20, day: 50 },
  /** A browser with a device cookie of the account: its own windows instead of the two above. */
  perDevice: { minute: 5, hour: 20, day: 50 },
  /** Sign-ups and one-time-link forms, per client address. */
  signupPerAddress: { minute: 5, hour: 20, day: 50 },
} as const satisfies Record<string, WindowLimits>;

/** Password hashes one client (IPv4 address or IPv6 /64, or a device cookie) may have running at once. */
export const HASHES_IN_FLIGHT_PER_CLIENT = 2;

/** How long a client refused by the hashing bound is asked to wait: one hash takes about a tenth of that. */
const HASHING_RETRY_S = 1;

/**
 * The dashboard's guards against guessing: windows of attempts (in the API's limiter, shared
 * across instances) and a bound on the password hashes each client has running at once (per
 * process: it protects this process's hashing threads). The hashing threads are few (libuv's
 * pool, 4 by default) and an Argon2id hash takes them ~100 ms, so without the bound one client
 * sending dozens of attempts at once queues everyone else's sign-in behind its hashes.
 */
export class Throttle {
  /** Hashes running per client, in this process; a client with none has no entry. */
  private readonly inFlight = new Map<string, number>();

  /** `limiter`: the API's (src/compose.ts gives one in memory when the API runs without). */
  constructor(private readonly limiter: RateLimiter) {}

  /** Counts one attempt under `key`; a RateLimitError (429 page) when a window is full. */
  async attempt(key: string, limits: WindowLimits, now: number, what: string): Promise<void> {
    const decision = await this.limiter.consume(`page:${key}`, limits, now);
    if (decision.allowed) return;
    const retryS = Math.max(1, Math.ceil(((decision.exceeded?.resetAt ?? now + 60_000) - now) / 1000));
    throw new RateLimitError(`Too many ${what} attempts. Wait ${retryS} seconds and try again.`, { retry_after_s: retryS }, { 'retry-after': String(retryS) });
  }

  /**
   * Runs `work` (which hashes a password) for `client` while it has fewer than
   * HASHES_IN_FLIGHT_PER_CLIENT running; beyond that a RateLimitError at once, and no work.
   */
  async hashing<T>(client: string, work: () => Promise<T>): Promise<T> {
    const running = this.inFlight.get(client) ?? 0;
    if (running >= HASHES_IN_FLIGHT_PER_CLIENT) {
      throw new RateLimitError(
        `Too many attempts at once from your address. Wait ${HASHING_RETRY_S} second and try again.`,
        { retry_after_s: HASHING_RETRY_S },
        { 'retry-after': String(HASHING_RETRY_S) },
      );
    }
    this.inFlight.set(client, running + 1);
    try {
      return await work();
    } finally {
      const left = (this.inFlight.get(client) ?? 1) - 1;
      if (left === 0) this.inFlight.delete(client);
      else this.inFlight.set(client, left);
    }
  }
}
