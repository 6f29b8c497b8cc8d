import ipaddr from 'ipaddr.js';
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { PLANS, planLimits, type PlanLimits, type PlanName } from '../../domain/accounts/plans.js';
import type { AccountService, Clock } from '../../domain/accounts/service.js';
import { AppError, RateLimitError } from '../../errors.js';
import { headlineWindow, type Decision, type RateLimiter, type WindowLimits } from '../../infra/ratelimit/limiter.js';
import type { Account, UsageRepository } from '../../infra/store/store.js';
import { pathOf, type RouteIndex } from '../route-index.js';
import type { DaySeed } from '../../infra/ratelimit/memory.js';
import { utcDay, utcTimestamp } from '../../domain/usage/service.js';

declare module 'fastify' {
  interface FastifyRequest {
    /** The authenticated account; null on public routes and when authentication failed. */
    account: Account | null;
    tokenId: number | null;
    /** When the request arrived, by the app's clock (rate windows and usage days use it). */
    receivedAt: Date;
    /** The account's windows after this request was admitted (for /usage/stats). */
    rateDecision: Decision | null;
  }
  interface FastifyContextConfig {
    /** Routes under /api that need no token (the OpenAPI document); still limited per client IP. */
    public?: boolean;
  }
}

export const API_PREFIX = '/api';
/** Static assets of the interactive reference: neither authenticated nor limited. */
export const DOCS_PREFIX = `${API_PREFIX}/docs`;
/** Clients without a valid token get the free plan's figures, per IP (IPv6: per /64). */
export const ANONYMOUS_PLAN = 'free' satisfies PlanName;
export const ANONYMOUS_LIMITS: PlanLimits = PLANS[ANONYMOUS_PLAN];

export function isApiRequest(request: FastifyRequest): boolean {
  const url = request.url;
  return url === API_PREFIX || url.startsWith(`${API_PREFIX}/`) || url.startsWith(`${API_PREFIX}?`);
}

const ACCOUNT_KEY = /^acct:(\d+)$/;
function accountKey(id: number): string {
  return `acct:${id}`;
}

/** An account's calls of the day, as recorded, seed the in-process limiter after a restart. */
export function daySeedFromUsage(usage: UsageRepository): DaySeed {
  return async (key, now) => {
    const id = ACCOUNT_KEY.exec(key)?.[1];
    return id ? usage.callsOn(Number(id), utcDay(now)) : 0;
  };
}

interface Policy {
  limits: WindowLimits;
  /** The RateLimit-Policy header value, built once per plan rather than per request. */
  header: string;
}
const policies = new WeakMap<PlanLimits, Policy>();

function policyOf(plan: PlanLimits): Policy {
  let policy = policies.get(plan);
  if (!policy) {
    const limits = { minute: plan.requests_per_minute, hour: plan.requests_per_hour, day: plan.requests_per_day };
    policy = { limits, header: `${limits.minute};w=60, ${limits.hour};w=3600, ${limits.day};w=86400` };
    policies.set(plan, policy);
  }
  return policy;
}

/** The limiter key of an anonymous client: its IPv4 address, or its IPv6 /64. */
export function clientKey(ip: string): string {
  try {
    let addr = ipaddr.parse(ip);
    if (addr.kind() === 'ipv6' && (addr as ipaddr.IPv6).isIPv4MappedAddress()) addr = (addr as ipaddr.IPv6).toIPv4Address();
    if (addr.kind() === 'ipv4') return `ip:${addr.toString()}`;
    const parts = (addr as ipaddr.IPv6).parts.slice(0, 4).map((p) => p.toString(16));
    return `ip:${parts.join(':')}::/64`;
  } catch {
    return `ip:${ip}`;
  }
}

function setRateHeaders(reply: FastifyReply, decision: Decision, policy: Policy): void {
  const w = headlineWindow(decision);
  reply.headers({
    'x-ratelimit-limit': w.limit,
    'x-ratelimit-remaining': w.remaining,
    'x-ratelimit-reset': Math.ceil(w.resetAt / 1000),
    'ratelimit-policy': policy.header,
  });
}

function rateLimitError(decision: Decision, plan: string, limits: WindowLimits, now: number, anonymous: boolean): RateLimitError {
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

/**
 * Authentication and rate limiting of every /api request, as one step: a valid token is limited
 * per account by its plan; anything else (no token, a bad one, public routes) per client IP, so
 * guessing tokens is as slow as the free plan. Every response, errors included, carries the
 * X-RateLimit-* headers of whichever limiter judged the request.
 */
export function registerAccess(app: FastifyInstance, deps: { accounts: AccountService; limiter: RateLimiter; clock: Clock; routes: RouteIndex }): void {
  app.decorateRequest('account', null);
  app.decorateRequest('tokenId', null);
  app.decorateRequest('rateDecision', null);
  app.decorateRequest('receivedAt', null as unknown as Date);

  app.addHook('onRequest', async (request, reply) => {
    request.receivedAt = deps.clock();
    if (!isApiRequest(request) || request.url.startsWith(DOCS_PREFIX)) return;
    const now = request.receivedAt.getTime();

    let authError: AppError | null = null;
    if (!deps.routes.isPublic(pathOf(request.url))) {
      try {
        const { account, tokenId } = await deps.accounts.authenticate(request.headers.authorization, now);
        const policy = policyOf(planLimits(account.plan));
        const decision = await deps.limiter.consume(accountKey(account.id), policy.limits, now);
        setRateHeaders(reply, decision, policy);
        request.account = account;
        request.tokenId = tokenId;
        request.rateDecision = decision;
        if (!decision.allowed) throw rateLimitError(decision, account.plan, policy.limits, now, false);
        return;
      } catch (err) {
        if (!(err instanceof AppError) || (err.code !== 'unauthorized' && err.code !== 'forbidden')) throw err;
        authError = err;
      }
    }

    const policy = policyOf(ANONYMOUS_LIMITS);
    const decision = await deps.limiter.consume(clientKey(request.ip), policy.limits, now);
    setRateHeaders(reply, decision, policy);
    if (!decision.allowed) throw rateLimitError(decision, ANONYMOUS_PLAN, policy.limits, now, true);
    if (authError) throw authError;
  });
}

/**
 * Calls of the current UTC day, this request included: the account's day window counts every
 * request that passed the limiter, which is what a call is. The in-process limiter is seeded
 * from the recorded usage after a restart, the Redis one keeps its counts, so this agrees with
 * /usage/stats without a database read on every request.
 */
export function callsToday(request: FastifyRequest): number {
  return request.rateDecision?.windows.find((w) => w.window === 'day')?.used ?? 0;
}
