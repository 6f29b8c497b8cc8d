import { accountIdOfKey, accountKey } from '../owner.js';
import type { RateLimiter, WindowSeed } from './rate-limit.js';
import type { UsageRecord, UsageRepository } from './repository.js';

/** No recorded usage: an anonymous client's key, which nothing records. */
const NO_CALLS = { minute: 0, hour: 0, day: 0 } as const;

/**
 * An account's calls of the current minute, hour and day, as recorded, seed a limiter window it
 * has not seen (after a restart, a Redis that restarted empty, or while Redis is away).
 */
export function windowSeedFromUsage(usage: UsageRepository): WindowSeed {
  return async (key, now) => {
    const id = accountIdOfKey(key);
    return id !== null ? usage.windowCounts(id, now) : NO_CALLS;
  };
}

/** Whether the limiter's calls under `key` are recorded in usage: an account's are, an address's never. */
export function recordsCallsOf(key: string): boolean {
  return accountIdOfKey(key) !== null;
}

/**
 * Tells the limiter which admitted calls have their usage records written (the recorder calls it
 * after each write): a successful or failed record is an admitted call; a rate_limited one never
 * was, or was refunded.
 */
export function callsRecordedTo(limiter: RateLimiter): ((records: readonly UsageRecord[]) => void) | undefined {
  if (!limiter.recorded) return undefined;
  return (records) => {
    const calls: Array<{ key: string; at: number }> = [];
    for (const r of records) if (r.outcome !== 'rate_limited' && r.at !== undefined) calls.push({ key: accountKey(r.account_id), at: r.at });
    limiter.recorded!(calls);
  };
}
