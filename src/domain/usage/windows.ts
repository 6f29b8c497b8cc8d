import { planLimits, windowLimitsOf } from '../accounts/plans.js';
import { WINDOWS, decide, type WindowLimits, type WindowState } from './rate-limit.js';
import type { WindowCounts } from './repository.js';

/** A day this far used (or more) earns the overview's warning banner. */
export const DAY_WARNING_SHARE = 0.8;

/** A plan's limits as the rate limiter takes them. */
export function windowLimits(plan: string): WindowLimits {
  return windowLimitsOf(planLimits(plan));
}

/**
 * The minute, hour and day windows as they stand, from the limiter's counts (`peeked`, null
 * without a limiter) and the recorded calls (`recorded`, null when not read). A limiter learns an
 * account's recorded calls only at its first request after a start, so until then it peeks 0: each
 * window shows the larger figure. Once the limiter has counted, its figure includes every
 * recorded call of the window, and calls admitted but not yet written.
 */
export function currentWindows(peeked: readonly WindowState[] | null, recorded: WindowCounts | null, limits: WindowLimits, now: number): WindowState[] {
  const counts = WINDOWS.map((w) => Math.max(peeked?.find((s) => s.window === w)?.used ?? 0, recorded?.[w] ?? 0));
  return decide(true, counts, limits, now).windows;
}

/** Whether the limiter's windows need the recorded calls beside them: none at all, or a day it shows empty. */
export function needsRecordedCounts(peeked: readonly WindowState[] | null): boolean {
  return peeked === null || (peeked.find((w) => w.window === 'day')?.used ?? 0) === 0;
}

/** The day's warning when at least DAY_WARNING_SHARE of it is used: calls left and when the day resets. */
export function dayWarning(windows: readonly WindowState[]): { used: number; limit: number; left: number; resetAt: number } | null {
  const day = windows.find((w) => w.window === 'day');
  if (!day || day.limit <= 0 || day.used < DAY_WARNING_SHARE * day.limit) return null;
  return { used: day.used, limit: day.limit, left: day.remaining, resetAt: day.resetAt };
}
