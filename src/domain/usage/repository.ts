/** Usage analytics' store: one row per account, day and endpoint, and the per-minute counts that rebuild rate windows. */

export type UsageOutcome = 'successful' | 'failed' | 'rate_limited';

/** One answered request, as usage analytics counts it. */
export interface UsageRecord {
  account_id: number;
  /** UTC day, YYYY-MM-DD. */
  day: string;
  /** The route without the /api prefix, e.g. /ip/lookup. */
  endpoint: string;
  outcome: UsageOutcome;
  duration_ms: number;
  /**
   * When the request was admitted, epoch ms (the rate limiter's clock): its UTC minute is where
   * the call counts in the per-minute record that rebuilds the rate windows after a restart.
   * Without it the record counts in its day only.
   */
  at?: number;
}

/** Recorded calls (successful + failed) of an account in the calendar minute, hour and day of an instant. */
export interface WindowCounts {
  minute: number;
  hour: number;
  day: number;
}

/** The per account, day and endpoint aggregate that answers every usage question. */
export interface UsageRow {
  day: string;
  endpoint: string;
  requests: number;
  successful: number;
  failed: number;
  rate_limited: number;
  total_ms: number;
}

export interface UsageRepository {
  /** Adds the records in one transaction: all of them are durable when it resolves, or none. */
  record(records: readonly UsageRecord[]): Promise<void>;
  /** Rows for days fromDay..toDay inclusive, ordered by day then endpoint. */
  rows(accountId: number, fromDay: string, toDay: string): Promise<UsageRow[]>;
  /** Calls (successful + failed) of one day. */
  callsOn(accountId: number, day: string): Promise<number>;
  /**
   * Calls (successful + failed) in the UTC minute, hour and day of `now` (epoch ms): what the
   * rate limiter's windows are rebuilt from after a restart (its own, or Redis's).
   */
  windowCounts(accountId: number, now: number): Promise<WindowCounts>;
}
