/**
 * Fixed UTC windows (calendar minute, hour, day). A request is admitted only while every window
 * has room, and admission counts it in all three at once.
 */

export type WindowName = 'minute' | 'hour' | 'day';
export const WINDOWS: readonly WindowName[] = ['minute', 'hour', 'day'];
export const WINDOW_MS: Readonly<Record<WindowName, number>> = { minute: 60_000, hour: 3_600_000, day: 86_400_000 };

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
   * back (API.md: a call admitted and never answered does not stay spent).
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

/** WINDOW_MS in WINDOWS order, for the per-request loops over the windows. */
const LENGTHS_MS: readonly number[] = WINDOWS.map((w) => WINDOW_MS[w]);

/** `windowStart` of the i-th of WINDOWS, without a lookup by name: it runs three times per request. */
export function windowStartAt(i: number, now: number): number {
  return now - (now % LENGTHS_MS[i]!);
}

/**
 * Builds the decision from the three counts as they stand after the attempt. It runs on every
 * request, so it is written as plain loops rather than map/filter.
 */
export function decide(allowed: boolean, counts: readonly number[], limits: WindowLimits, now: number): Decision {
  const windows: WindowState[] = [];
  let exceeded: WindowState | null = null;
  for (let i = 0; i < WINDOWS.length; i++) {
    const window = WINDOWS[i]!;
    const used = counts[i] ?? 0;
    const limit = limits[window];
    const state: WindowState = { window, limit, used, remaining: Math.max(0, limit - used), resetAt: windowStartAt(i, now) + LENGTHS_MS[i]! };
    windows.push(state);
    // On refusal, the longest full window: a retry can succeed only after it resets.
    if (!allowed && state.remaining === 0) exceeded = state;
  }
  if (!allowed && exceeded === null) exceeded = windows[0]!;
  return { allowed, windows, exceeded };
}

/** The window the X-RateLimit-* headers describe: fewest remaining; ties go to the shortest window. */
export function headlineWindow(decision: Decision): WindowState {
  if (decision.exceeded) return decision.exceeded;
  const windows = decision.windows;
  let best = windows[0]!;
  for (let i = 1; i < windows.length; i++) if (windows[i]!.remaining < best.remaining) best = windows[i]!;
  return best;
}
