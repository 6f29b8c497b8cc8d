import type { UsageDailyTable } from './schema.js';
import type { UsageRecord } from '../../domain/usage/repository.js';
import { WINDOW_MS, windowStart } from '../../domain/usage/rate-limit.js';

/** Folds a batch into one increment per (account, day, endpoint), so a batch is a few upserts. */
export function aggregateUsage(records: readonly UsageRecord[]): UsageDailyTable[] {
  const byKey = new Map<string, UsageDailyTable>();
  let inc: UsageDailyTable | undefined;
  for (const r of records) {
    // A batch is mostly runs of one client calling one endpoint: the row of the record before
    // usually takes this one too, without building and hashing a key.
    if (!inc || inc.account_id !== r.account_id || inc.day !== r.day || inc.endpoint !== r.endpoint) {
      const key = `${r.account_id}\u0000${r.day}\u0000${r.endpoint}`;
      inc = byKey.get(key);
      if (!inc) {
        inc = { account_id: r.account_id, day: r.day, endpoint: r.endpoint, requests: 0, successful: 0, failed: 0, rate_limited: 0, total_ms: 0 };
        byKey.set(key, inc);
      }
    }
    inc.requests += 1;
    inc[r.outcome] += 1;
    inc.total_ms += r.duration_ms;
  }
  return [...byKey.values()];
}

/** How long per-minute call counts are kept: the hour window needs the last hour, this is twice that. */
export const USAGE_MINUTES_KEEP_MS = 2 * WINDOW_MS.hour;
/** Old minutes are purged by the first write after this long since the last purge. */
export const USAGE_MINUTES_PURGE_EVERY_MS = 60_000;

/** One increment of an account's calls in one UTC minute (epoch ms of its start). */
export interface MinuteIncrement {
  account_id: number;
  minute: number;
  calls: number;
}

/**
 * Folds a batch into calls per (account, UTC minute): 429s are not calls, and records without
 * `at` count in their day only. `latest` is the newest `at`, from which the purge cutoff is taken
 * (the records' clock, not the wall clock, so a test clock in the past purges nothing it reads).
 */
export function aggregateMinutes(records: readonly UsageRecord[]): { rows: MinuteIncrement[]; latest: number } {
  const byKey = new Map<string, MinuteIncrement>();
  let inc: MinuteIncrement | undefined;
  let latest = -Infinity;
  for (const r of records) {
    if (r.outcome === 'rate_limited' || r.at === undefined) continue;
    if (r.at > latest) latest = r.at;
    const minute = windowStart('minute', r.at);
    if (!inc || inc.account_id !== r.account_id || inc.minute !== minute) {
      const key = `${r.account_id}\u0000${minute}`;
      inc = byKey.get(key);
      if (!inc) {
        inc = { account_id: r.account_id, minute, calls: 0 };
        byKey.set(key, inc);
      }
    }
    inc.calls += 1;
  }
  return { rows: [...byKey.values()], latest };
}

/** The minute rows that make up `now`'s minute and hour: [minuteStart, hourStart]. */
export function minuteBounds(now: number): { minute: number; hour: number } {
  return { minute: windowStart('minute', now), hour: windowStart('hour', now) };
}

/** Decides, per store, when the next purge of old minutes is due. */
export class MinutePurge {
  private last = -Infinity;

  /** The cutoff (minutes before it are dropped) when a purge is due at `latest`, else undefined. */
  due(latest: number): number | undefined {
    if (!Number.isFinite(latest) || latest - this.last < USAGE_MINUTES_PURGE_EVERY_MS) return undefined;
    this.last = latest;
    return latest - USAGE_MINUTES_KEEP_MS;
  }
}

/** YYYY-MM-DD of a UTC instant, as UsageRecord.day holds it. */
export function utcDayOf(now: number): string {
  return new Date(now).toISOString().slice(0, 10);
}
