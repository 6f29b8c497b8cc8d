import { PLANS, PLAN_NAMES, planLimits, windowLimitsOf, type PlanLimits, type PlanName } from '../domain/accounts/plans.js';
import { WINDOW_MS, headlineWindow, type Decision, type WindowLimits } from '../domain/usage/rate-limit.js';
import { utcTimestamp } from '../domain/usage/service.js';
import { RateLimitError } from '../errors.js';

/**
 * The plans' rate windows as the API states them: the limiter's limits, the X-RateLimit-* and
 * RateLimit-Policy headers, and the 429. The access check (src/http/plugins/auth.ts) and the
 * admission of every call (src/http/call-steps.ts) both speak through these.
 */

/** Clients without a valid token get the free plan's figures, per IP (IPv6: per /64). */
export const ANONYMOUS_PLAN = 'free' satisfies PlanName;
export const ANONYMOUS_LIMITS: PlanLimits = PLANS[ANONYMOUS_PLAN];

/** A plan's windows as the limiter takes them, and its RateLimit-Policy header (`w=` in seconds). */
export interface RatePolicy {
  limits: WindowLimits;
  header: string;
}

function ratePolicy(plan: PlanLimits): RatePolicy {
  const limits = windowLimitsOf(plan);
  const window = (name: keyof WindowLimits) => `${limits[name]};w=${WINDOW_MS[name] / 1000}`;
  return { limits, header: `${window('minute')}, ${window('hour')}, ${window('day')}` };
}

/** Every plan's policy, made once here rather than on every request. */
const RATE_POLICIES = new Map<PlanLimits, RatePolicy>(PLAN_NAMES.map((name) => [PLANS[name], ratePolicy(PLANS[name])]));

/** The policy of an account's plan (an unknown plan name gets the default plan's, as planLimits does). */
export function policyOf(plan: string): RatePolicy {
  return RATE_POLICIES.get(planLimits(plan))!;
}

/** The windows of a client without a valid token, per address. */
export const ANONYMOUS_POLICY = RATE_POLICIES.get(ANONYMOUS_LIMITS)!;

/** The rate-limit headers of a decision: those of the window with the fewest requests left. */
export function rateHeaders(decision: Decision, policy: RatePolicy): Record<string, string> {
  const w = headlineWindow(decision);
  return {
    'x-ratelimit-limit': String(w.limit),
    'x-ratelimit-remaining': String(w.remaining),
    'x-ratelimit-reset': String(Math.ceil(w.resetAt / 1000)),
    'ratelimit-policy': policy.header,
  };
}

/** The 429 of a refused decision: which window is full and when to try again (Retry-After). */
export function rateLimitError(decision: Decision, plan: string, limits: WindowLimits, now: number, anonymous: boolean): RateLimitError {
  const w = decision.exceeded!;
  const who = anonymous
    ? `too many requests without a valid API token from this address; the ${plan} plan's figures apply`
    : `rate limit exceeded for the ${plan} plan`;
  const beyondMinute = w.window === 'minute' ? '' : `; its ${w.limit} requests per ${w.window} are used up`;
  const resetAt = utcTimestamp(w.resetAt);
  return new RateLimitError(
    `${who}: at most ${limits.minute} requests per minute${beyondMinute}; try again after ${resetAt} UTC`,
    { limit: limits.minute, remaining: 0, reset_at: resetAt, window: w.window },
    { 'retry-after': String(Math.max(1, Math.ceil((w.resetAt - now) / 1000))) },
  );
}
