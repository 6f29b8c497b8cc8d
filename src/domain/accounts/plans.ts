import type { WindowLimits } from '../usage/rate-limit.js';

/** The four plans of the specification and their limits. */

export interface PlanLimits {
  readonly requests_per_minute: number;
  readonly requests_per_hour: number;
  readonly requests_per_day: number;
}

export const PLANS = {
  free: { requests_per_minute: 10, requests_per_hour: 100, requests_per_day: 500 },
  basic: { requests_per_minute: 30, requests_per_hour: 500, requests_per_day: 5_000 },
  pro: { requests_per_minute: 60, requests_per_hour: 1_000, requests_per_day: 10_000 },
  enterprise: { requests_per_minute: 120, requests_per_hour: 5_000, requests_per_day: 50_000 },
} as const satisfies Record<string, PlanLimits>;

export type PlanName = keyof typeof PLANS;

/**
 * Requests that probe the network (/proxy/*, /port/*, /ipv6/test, /dns/whois) one account may
 * have in flight at once (docs/api.md, "Rate limits"); one more is a 429 with window "concurrent".
 */
export const IN_FLIGHT_LIMITS = {
  free: 2,
  basic: 4,
  pro: 8,
  enterprise: 16,
} as const satisfies Record<PlanName, number>;
export const PLAN_NAMES = Object.keys(PLANS) as PlanName[];

/** The plan of a new account when none is named. */
export const DEFAULT_PLAN: PlanName = 'free';

export function isPlanName(value: string): value is PlanName {
  return Object.hasOwn(PLANS, value);
}

function planOrDefault(plan: string): PlanName {
  return isPlanName(plan) ? plan : DEFAULT_PLAN;
}

export function planLimits(plan: string): PlanLimits {
  return PLANS[planOrDefault(plan)];
}

/** A plan's limits as the rate limiter takes them (its minute, hour and day windows). */
export function windowLimitsOf(plan: PlanLimits): WindowLimits {
  return { minute: plan.requests_per_minute, hour: plan.requests_per_hour, day: plan.requests_per_day };
}

/** Probing requests an account of this plan may have in flight at once (IN_FLIGHT_LIMITS). */
export function inFlightLimit(plan: string): number {
  return IN_FLIGHT_LIMITS[planOrDefault(plan)];
}
