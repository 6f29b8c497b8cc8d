/**
 * Fixed UTC windows (calendar minute, hour, day). A request is admitted only while every window
 * has room, and admission counts it in all three at once.
 */

import { DAY_MS } from '../../lib/time.js';

export type WindowName = 'minute' | 'hour' | 'day';
export const WINDOWS: readonly WindowName[] = ['minute', 'hour', 'day'];
export const WINDOW_MS: Readonly<Record<WindowName, number>> = { minute: 60_000, hour: 3_600_000, day: DAY_MS };

export type WindowLimits = Readonly<Record<WindowName, number>>;

export interface WindowState {
  window: WindowName;
  limit: number;
  used: number;
  remaining: number;
  /** End of the window, epoch milliseconds. */
  resetAt: number;
}

export interface Decision {
  allowed: boolean;
  /** minute, hour, day, after this request was (or was not) counted. */
  windows: WindowState[];
  /** On refusal, the full window that blocks longest (its reset is when a retry can succeed). */
  exceeded: WindowState | null;
}

/**
 * Where a key's counts come from when a limiter first sees the key (after a restart, or when
 * Redis lost them): the calls recorded in the minute, hour and day of `now`.
 */
export type WindowSeed = (key: string, now: number) => Promise<Readonly<Record<WindowName, number>>>;

export interface RateLimiter {
  /** Admits and counts one request for `key` when every window has room, atomically. */
  consume(key: string, limits: WindowLimits, now: number): Promise<Decision>;
  /** The windows as they stand, counting nothing. */
  peek(key: string, limits: WindowLimits, now: number): Promise<WindowState[]>;
  /**
   * Takes back one request counted by `consume` at `now` (in the windows that are still those of
   * `now`): a request admitted here and then refused for another reason (too much work in flight)
   * is a 429, and a 429 is not a call. Best effort: a window that has moved on is left alone.
   */
  refund?(key: string, now: number): Promise<void>;
  /**
   * Calls admitted by `consume` (key, and the clock they were consumed at) whose usage records
   * are now written. A limiter shared by several instances keeps each instance's admitted calls
   * that are not yet recorded, so that those of an instance killed before writing them are given
   * back (docs/api.md: a call admitted and never answered does not stay spent).
   */
  recorded?(calls: ReadonlyArray<{ key: string; at: number }>): void;
  /**
   * A limiter backed by Redis says whether Redis answers ('ok') or each instance is limiting by
   * itself until it does ('degraded'); an in-process one has no such state.
   */
  redisState?(): RedisState;
  close(): Promise<void>;
}

export type RedisState = 'ok' | 'degraded';

export function windowStart(window: WindowName, now: number): number {
  return now - (now % WINDOW_MS[window]);
}

/** Builds the decision from the three counts (minute, hour, day) as they stand after the attempt. */
export function decide(allowed: boolean, counts: readonly number[], limits: WindowLimits, now: number): Decision {
  const windows = WINDOWS.map((window, i): WindowState => {
    const used = counts[i] ?? 0;
    const limit = limits[window];
    return { window, limit, used, remaining: Math.max(0, limit - used), resetAt: windowStart(window, now) + WINDOW_MS[window] };
  });
  // On refusal, the longest full window: a retry can succeed only after it resets.
  const exceeded = allowed ? null : (windows.filter((w) => w.remaining === 0).pop() ?? windows[0]!);
  return { allowed, windows, exceeded };
}

/** The window the X-RateLimit-* headers describe: fewest remaining; ties go to the shortest window. */
export function headlineWindow(decision: Decision): WindowState {
  return decision.exceeded ?? decision.windows.reduce((best, w) => (w.remaining < best.remaining ? w : best));
}
