import { LRUCache } from 'lru-cache';
import { planLimits } from '../accounts/plans.js';
import type { UsageOutcome, UsageRepository, UsageRow } from './repository.js';
import type { WindowName, WindowState } from './rate-limit.js';
import { round2 } from '../../lib/round.js';
import { DAY_MS } from '../../lib/time.js';

/** Bounds of `days` in /usage/history and /usage/export. */
export const USAGE_DAYS_MIN = 1;
export const USAGE_DAYS_MAX = 365;
export const USAGE_DAYS_DEFAULT = 30;

export function outcomeOf(status: number): UsageOutcome {
  if (status === 429) return 'rate_limited';
  return status >= 200 && status < 300 ? 'successful' : 'failed';
}

/** YYYY-MM-DD of a UTC instant. */
export function utcDay(at: Date | number): string {
  return new Date(at).toISOString().slice(0, 10);
}

/** `YYYY-MM-DD HH:MM:SS` in UTC, the form of the specification's reset_at. */
export function utcTimestamp(at: Date | number): string {
  return new Date(at).toISOString().slice(0, 19).replace('T', ' ');
}

export interface DayCounts {
  date: string;
  requests: number;
  successful: number;
  failed: number;
  rate_limited: number;
}

export interface ExportRow extends DayCounts {
  endpoint: string;
  avg_response_time: number;
}

/** One endpoint's totals over a span of days. `calls` = successful + failed: a 429 is not a call. */
export interface EndpointTotal {
  endpoint: string;
  calls: number;
  requests: number;
  successful: number;
  failed: number;
  rate_limited: number;
  avg_response_time: number;
}

/** The dashboard's overview of a span of days: per day (every day, oldest first) and per endpoint (most calls first). */
export interface UsageOverview {
  days: DayCounts[];
  endpoints: EndpointTotal[];
}

export interface UsageStats {
  plan: string;
  api_calls_used: number;
  api_calls_limit: number;
  windows: Record<WindowName, { limit: number; used: number; remaining: number; reset_at: string }>;
  today: Omit<DayCounts, 'date'>;
  by_endpoint: Record<string, number>;
}

/** The days from `days - 1` days before `now` (epoch ms) up to today, oldest first. */
function dayRange(now: number, days: number): readonly string[] {
  const today = Math.floor(now / DAY_MS);
  return Array.from({ length: days }, (_, i) => utcDay((today - (days - 1 - i)) * DAY_MS));
}

/** How long the overview keeps an account's rows of the days before today. */
export const PAST_ROWS_TTL_MS = 60_000;
/** Accounts whose past rows are kept at once; beyond it the least recently viewed goes (memory stays bounded). */
const PAST_ROWS_MAX_ACCOUNTS = 1_000;

/** Every day of `range` with the rows' totals, days without traffic at 0. */
function perDay(range: readonly string[], rows: readonly UsageRow[]): DayCounts[] {
  const byDay = new Map<string, DayCounts>(range.map((date) => [date, { date, requests: 0, successful: 0, failed: 0, rate_limited: 0 }]));
  for (const r of rows) {
    const d = byDay.get(r.day)!;
    d.requests += r.requests;
    d.successful += r.successful;
    d.failed += r.failed;
    d.rate_limited += r.rate_limited;
  }
  return [...byDay.values()];
}

/** The rows' totals per endpoint, most calls first (then most requests, then by name). */
function perEndpoint(rows: readonly UsageRow[]): EndpointTotal[] {
  const byEndpoint = new Map<string, EndpointTotal & { total_ms: number }>();
  for (const r of rows) {
    let e = byEndpoint.get(r.endpoint);
    if (!e) {
      e = { endpoint: r.endpoint, calls: 0, requests: 0, successful: 0, failed: 0, rate_limited: 0, avg_response_time: 0, total_ms: 0 };
      byEndpoint.set(r.endpoint, e);
    }
    e.calls += r.successful + r.failed;
    e.requests += r.requests;
    e.successful += r.successful;
    e.failed += r.failed;
    e.rate_limited += r.rate_limited;
    e.total_ms += r.total_ms;
  }
  return [...byEndpoint.values()]
    .map(({ total_ms, ...e }) => ({ ...e, avg_response_time: e.requests > 0 ? round2(total_ms / e.requests) : 0 }))
    .sort((a, b) => b.calls - a.calls || b.requests - a.requests || (a.endpoint < b.endpoint ? -1 : a.endpoint > b.endpoint ? 1 : 0));
}

/** Usage analytics over the per-day aggregates. */
export class UsageService {
  constructor(private readonly usage: UsageRepository) {}

  /** Today's figures, the asking request included as a successful call of `currentEndpoint`. */
  async stats(account: { id: number; plan: string }, windows: WindowState[], now: number, currentEndpoint: string): Promise<UsageStats> {
    const today = utcDay(now);
    const rows = await this.usage.rows(account.id, today, today);
    const totals = { requests: 1, successful: 1, failed: 0, rate_limited: 0 };
    const byEndpoint: Record<string, number> = { [currentEndpoint]: 1 };
    for (const r of rows) {
      totals.requests += r.requests;
      totals.successful += r.successful;
      totals.failed += r.failed;
      totals.rate_limited += r.rate_limited;
      byEndpoint[r.endpoint] = (byEndpoint[r.endpoint] ?? 0) + r.successful + r.failed;
    }
    const limits = planLimits(account.plan);
    // One figure wherever it is read: the day window that admitted this request, as GET /user
    // reports it (the limiter rebuilds it from the recorded calls whenever it lost it). Without a
    // limiter, the recorded calls and this one.
    const day = windows.find((w) => w.window === 'day');
    return {
      plan: account.plan,
      api_calls_used: day ? day.used : totals.successful + totals.failed,
      api_calls_limit: limits.requests_per_day,
      windows: Object.fromEntries(
        windows.map((w) => [w.window, { limit: w.limit, used: w.used, remaining: w.remaining, reset_at: utcTimestamp(w.resetAt) }]),
      ) as UsageStats['windows'],
      today: totals,
      by_endpoint: byEndpoint,
    };
  }

  /** The rows of the last `days` UTC days, today included, and those days oldest first. */
  private async lastDays(accountId: number, days: number, now: number): Promise<{ range: readonly string[]; rows: UsageRow[] }> {
    const range = dayRange(now, days);
    return { range, rows: await this.usage.rows(accountId, range[0]!, range[range.length - 1]!) };
  }

  async history(accountId: number, days: number, now: number): Promise<DayCounts[]> {
    const { range, rows } = await this.lastDays(accountId, days, now);
    return perDay(range, rows);
  }

  /**
   * Per day and per endpoint over the last `days` days, for the dashboard's overview. Today's rows
   * are read every time; the days before it were settled at midnight, so their rows are kept for
   * PAST_ROWS_TTL_MS per account (a write that lands on a past day, a request answered across
   * midnight, shows within that time). Exports and /usage/history always read everything. Kept
   * for its figure: BENCHMARKS.md, "Speed tricks", row "overview's past-rows cache".
   */
  async overview(accountId: number, days: number, now: number): Promise<UsageOverview> {
    const range = dayRange(now, days);
    const today = range[range.length - 1]!;
    const past = range.length > 1 ? await this.pastRows(accountId, range[0]!, range[range.length - 2]!, now) : [];
    const rows = past.concat(await this.usage.rows(accountId, today, today));
    return { days: perDay(range, rows), endpoints: perEndpoint(rows) };
  }

  /** Expiry by `until`, checked against the caller's `now` (the app's clock), as before; the LRU keeps the bound. */
  private readonly pastCache = new LRUCache<number, { from: string; to: string; until: number; rows: UsageRow[] }>({ max: PAST_ROWS_MAX_ACCOUNTS });

  private async pastRows(accountId: number, from: string, to: string, now: number): Promise<UsageRow[]> {
    const kept = this.pastCache.get(accountId);
    if (kept && kept.from === from && kept.to === to && now < kept.until) return kept.rows;
    const rows = await this.usage.rows(accountId, from, to);
    this.pastCache.set(accountId, { from, to, until: now + PAST_ROWS_TTL_MS, rows });
    return rows;
  }

  /** One row per day and endpoint that saw traffic, oldest first. */
  async exportRows(accountId: number, days: number, now: number): Promise<ExportRow[]> {
    const { rows } = await this.lastDays(accountId, days, now);
    return rows.map((r) => ({
      date: r.day,
      endpoint: r.endpoint,
      requests: r.requests,
      successful: r.successful,
      failed: r.failed,
      rate_limited: r.rate_limited,
      avg_response_time: r.requests > 0 ? round2(r.total_ms / r.requests) : 0,
    }));
  }
}
