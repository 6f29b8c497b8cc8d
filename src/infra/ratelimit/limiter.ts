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
  close(): Promise<void>;
}

export function windowStart(window: WindowName, now: number): number {
  return now - (now % WINDOW_MS[window]);
}

/** Builds the decision from the three counts as they stand after the attempt. */
export function decide(allowed: boolean, counts: readonly number[], limits: WindowLimits, now: number): Decision {
  const windows = WINDOWS.map((window, i) => {
    const used = counts[i] ?? 0;
    return {
      window,
      limit: limits[window],
      used,
      remaining: Math.max(0, limits[window] - used),
      resetAt: windowStart(window, now) + WINDOW_MS[window],
    };
  });
  let exceeded: WindowState | null = null;
  if (!allowed) {
    const full = windows.filter((w) => w.remaining === 0);
    exceeded = full[full.length - 1] ?? windows[0]!;
  }
  return { allowed, windows, exceeded };
}

/** The window the X-RateLimit-* headers describe: fewest remaining; ties go to the shortest window. */
export function headlineWindow(decision: Decision): WindowState {
  if (decision.exceeded) return decision.exceeded;
  return decision.windows.reduce((best, w) => (w.remaining < best.remaining ? w : best));
}
