import ipaddr from 'ipaddr.js';
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';

type HookDone = (err?: Error) => void;
import { PLANS, planLimits, windowLimitsOf, type PlanLimits, type PlanName } from '../../domain/accounts/plans.js';
import { bearerToken, detachedToken, type AccountService, type Authenticated } from '../../domain/accounts/service.js';
import { isPromise, whenReady, type MaybePromise } from '../../maybe-promise.js';
import { AppError, RateLimitError, UnauthorizedError } from '../../errors.js';
import { decide, headlineWindow, type Decision, type RateLimiter, type WindowLimits, type WindowName, type WindowState } from '../../domain/usage/rate-limit.js';
import type { Account } from '../../domain/accounts/repositories.js';
import type { UsageRepository } from '../../domain/usage/repository.js';
import { pathOf } from '../route-index.js';
import type { WindowSeed } from '../../infra/ratelimit/memory.js';
import type { RedisRateLimiterOptions } from '../../infra/ratelimit/redis.js';
import type { RedisStateLog } from '../../infra/redis/request-path.js';
import { utcTimestamp } from '../../domain/usage/service.js';

declare module 'fastify' {
  interface FastifyRequest {
    /** The authenticated account; null on public routes and when authentication failed. */
    account: Account | null;
    tokenId: number | null;
    /**
     * When the request arrived, epoch ms by the app's clock (rate windows and usage days use it):
     * a number, not a Date, so that no object is made for it on every request.
     */
    receivedAt: number;
    /** The account's windows after this request was admitted (for /usage/stats). */
    rateDecision: Decision | null;
    /** The usage endpoint of the route that matched (`/port/scan`), or UNMATCHED_ENDPOINT. */
    endpoint: string;
    /** Authenticated on an `uncounted` route: no call, no usage record. */
    uncounted: boolean;
  }
  interface FastifyContextConfig {
    /** Routes under /api that need no token (the OpenAPI document); still limited per client IP. */
    public?: boolean;
    /**
     * Routes whose requests are no calls (reading a job, API.md): a token is needed, but the
     * plan's windows are only shown in the headers, never spent, and usage records nothing.
     */
    uncounted?: boolean;
  }
}

export const API_PREFIX = '/api';
/** Static assets of the interactive reference: neither authenticated nor limited. */
export const DOCS_PREFIX = `${API_PREFIX}/docs`;
/** Clients without a valid token get the free plan's figures, per IP (IPv6: per /64). */
export const ANONYMOUS_PLAN = 'free' satisfies PlanName;
export const ANONYMOUS_LIMITS: PlanLimits = PLANS[ANONYMOUS_PLAN];

const ACCOUNT_KEY = /^acct:(\d+)$/;
/** Built once per account: a key made fresh on every request would be hashed afresh by every Map lookup. */
const accountKeys = new Map<number, string>();
const ACCOUNT_KEYS_MAX = 10_000;
export function accountKey(id: number): string {
  let key = accountKeys.get(id);
  if (key === undefined) {
    if (accountKeys.size >= ACCOUNT_KEYS_MAX) accountKeys.clear();
    key = `acct:${id}`;
    accountKeys.set(id, key);
  }
  return key;
}

/** Tokens whose account is remembered for an early consume (see admitEarly); beyond this the memory is dropped. */
const PRESUMED_MAX_ENTRIES = 10_000;

/** No recorded usage: an anonymous client's key, which nothing records. */
const NO_CALLS = { minute: 0, hour: 0, day: 0 } as const;

/**
 * An account's calls of the current minute, hour and day, as recorded, seed a limiter window it
 * has not seen (after a restart, a Redis that restarted empty, or while Redis is away).
 */
export function windowSeedFromUsage(usage: UsageRepository): WindowSeed {
  return async (key, now) => {
    const id = ACCOUNT_KEY.exec(key)?.[1];
    return id ? usage.windowCounts(Number(id), now) : NO_CALLS;
  };
}

/**
 * What the app's own limiter is built with: windows it has not seen start from the recorded
 * usage; on Redis, accounts' calls count as unrecorded until their usage records are written,
 * so the calls of an instance killed before writing them are given back within `reconcileMs`.
 */
export function accountLimiterOptions(usage: UsageRepository, log: RedisStateLog, reconcileMs: number, now: () => number): RedisRateLimiterOptions {
  return { seed: windowSeedFromUsage(usage), log, recordsCallsOf: (key) => ACCOUNT_KEY.test(key), reconcileMs, now };
}

interface Policy {
  limits: WindowLimits;
  /** The RateLimit-Policy header value, built once per plan rather than per request. */
  header: string;
  /** Each window's limit as header text (minute, hour, day). */
  limitText: Record<WindowName, string>;
}
const policies = new WeakMap<PlanLimits, Policy>();

function policyOf(plan: PlanLimits): Policy {
  let policy = policies.get(plan);
  if (!policy) {
    const limits = windowLimitsOf(plan);
    policy = {
      limits,
      header: `${limits.minute};w=60, ${limits.hour};w=3600, ${limits.day};w=86400`,
      limitText: { minute: String(limits.minute), hour: String(limits.hour), day: String(limits.day) },
    };
    policies.set(plan, policy);
  }
  return policy;
}

/** Appended to an anonymous client's key for the public routes (the OpenAPI document): their own budget. */
export const PUBLIC_KEY_SUFFIX = '|public';

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

/** The reset header's text for the last window end seen: it changes once per window, not per request. */
let resetAtMemo = -1;
let resetTextMemo = '';

/**
 * Header values go to Node as strings: a number is converted to text at each of Node's checks of
 * a header value, and these are written on every response.
 */
function setRateHeaders(reply: FastifyReply, decision: Decision, policy: Policy): void {
  const w = headlineWindow(decision);
  if (w.resetAt !== resetAtMemo) {
    resetAtMemo = w.resetAt;
    resetTextMemo = String(Math.ceil(w.resetAt / 1000));
  }
  reply.header('x-ratelimit-limit', policy.limitText[w.window]);
  reply.header('x-ratelimit-remaining', String(w.remaining));
  reply.header('x-ratelimit-reset', resetTextMemo);
  reply.header('ratelimit-policy', policy.header);
}

/** The headers of windows as they stand (`peek`), for an answer that spent nothing. */
function showWindows(reply: FastifyReply, windows: readonly WindowState[], policy: Policy, now: number): void {
  setRateHeaders(reply, decide(true, windows.map((w) => w.used), policy.limits, now), policy);
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

/** The usage endpoint of a request that reached no route, so junk paths add one row, not many. */
export const UNMATCHED_ENDPOINT = '(unmatched)';

type AccessHook = (request: FastifyRequest, reply: FastifyReply, done: HookDone) => void;

/** What the access check offers the plugins that refuse an admitted request for another reason. */
export interface AccessControl {
  /** The request was admitted by the account's windows but is refused after all (a 429): it is not a call. */
  refund(request: FastifyRequest): void;
}

/** What a route under /api asks of a request before its handler may run. */
export type Access = 'token' | 'public' | 'none';

/**
 * The access a route needs, from the route itself (its full URL pattern and its config), never
 * from the URL a client sent: `/%61pi/user`, `http://host/api/user` and `/api/user` reach the
 * same route and so the same check.
 */
export function accessOf(url: string, config: { public?: boolean } | undefined): Access {
  if (url !== API_PREFIX && !url.startsWith(`${API_PREFIX}/`)) return 'none';
  if (url === DOCS_PREFIX || url.startsWith(`${DOCS_PREFIX}/`)) return 'none';
  return config?.public ? 'public' : 'token';
}

/** The account of a request that passed the token check; a route that needs one never runs without it. */
export function accountOf(request: FastifyRequest): Account {
  if (request.account === null) throw new UnauthorizedError();
  return request.account;
}

/**
 * Authentication and rate limiting of every /api request, as one step: a valid token is limited
 * per account by its plan; anything else (no token, a bad one, public routes) per client IP, so
 * guessing tokens is as slow as the free plan. Every response, errors included, carries the
 * X-RateLimit-* headers of whichever limiter judged the request.
 *
 * The check is attached to each route as it is added (an `onRequest` hook of the route), so it
 * runs for every spelling of a path that the router maps to that route, and only for those. A
 * request that reaches no route runs no handler; under /api it is still authenticated and
 * limited before its 404 or 405, so probing for paths costs the same budget as calling them.
 */
export function registerAccess(
  app: FastifyInstance,
  deps: {
    accounts: AccountService;
    /** null: authentication alone, no rate limiting and no X-RateLimit-* headers (see AppDeps.limiter). */
    limiter: RateLimiter | null;
    /** Epoch ms now (the app's clock). */
    now: () => number;
  },
): AccessControl {
  app.decorateRequest('account', null);
  app.decorateRequest('tokenId', null);
  app.decorateRequest('rateDecision', null);
  app.decorateRequest('receivedAt', 0);
  app.decorateRequest('endpoint', UNMATCHED_ENDPOINT);
  app.decorateRequest('uncounted', false);

  const limiter = deps.limiter;
  /**
   * The anonymous path: per client IP at the free plan's figures. `authError`, when set, is the
   * refusal to answer with once the request is admitted (a bad token still spends the IP's budget).
   * The public document has a budget of its own (same figures, `key` ends in PUBLIC_KEY_SUFFIX):
   * a client that got its token wrong ten times can still read how to get it right.
   */
  const limitAnonymous = (request: FastifyRequest, reply: FastifyReply, authError: AppError | null, done: HookDone, suffix = ''): void => {
    if (!limiter) return done(authError ?? undefined);
    const now = request.receivedAt;
    const policy = policyOf(ANONYMOUS_LIMITS);
    whenReady(
      limiter.consume(clientKey(request.ip) + suffix, policy.limits, now),
      (decision) => {
        setRateHeaders(reply, decision, policy);
        if (!decision.allowed) return done(rateLimitError(decision, ANONYMOUS_PLAN, policy.limits, now, true));
        done(authError ?? undefined);
      },
      done,
    );
  };

  /** The account's decision applied: its headers, the request's account, and a 429 when refused. */
  const decided = (request: FastifyRequest, reply: FastifyReply, auth: Authenticated, policy: Policy, decision: Decision, done: HookDone): void => {
    setRateHeaders(reply, decision, policy);
    request.account = auth.account;
    request.tokenId = auth.tokenId;
    request.rateDecision = decision;
    done(decision.allowed ? undefined : rateLimitError(decision, auth.account.plan, policy.limits, request.receivedAt, false));
  };

  const admit = (request: FastifyRequest, reply: FastifyReply, auth: Authenticated, done: HookDone): void => {
    if (!limiter) {
      request.account = auth.account;
      request.tokenId = auth.tokenId;
      return done();
    }
    const policy = policyOf(planLimits(auth.account.plan));
    const decision = limiter.consume(accountKey(auth.account.id), policy.limits, request.receivedAt);
    // The in-process limiter answers at once, and then no closure is made for the answer.
    if (!isPromise(decision)) return decided(request, reply, auth, policy, decision, done);
    whenReady(decision, (d) => decided(request, reply, auth, policy, d, done), done);
  };

  /** An `uncounted` route's request: authenticated, its windows shown as they are, nothing spent. */
  const admitUncounted = (request: FastifyRequest, reply: FastifyReply, auth: Authenticated, done: HookDone): void => {
    request.account = auth.account;
    request.tokenId = auth.tokenId;
    request.uncounted = true;
    if (!limiter) return done();
    const policy = policyOf(planLimits(auth.account.plan));
    limiter.peek(accountKey(auth.account.id), policy.limits, request.receivedAt).then(
      (windows) => {
        showWindows(reply, windows, policy, request.receivedAt);
        done();
      },
      () => done(),
    );
  };

  /**
   * A token that was refused goes down the anonymous path (and is forgotten as a guess); anything
   * else is a real failure (the database cannot be reached: a 503), answered with the headers of
   * the windows as they stand, counting nothing: the account's when this instance knows the
   * token's account, else the address's.
   */
  const refused = (request: FastifyRequest, reply: FastifyReply, err: unknown, done: HookDone, token?: string): void => {
    if (err instanceof AppError && (err.code === 'unauthorized' || err.code === 'forbidden')) {
      if (token !== undefined) presumed.delete(token);
      return limitAnonymous(request, reply, err, done);
    }
    if (!limiter) return done(err as Error);
    const account = token === undefined ? undefined : presumed.get(token);
    const policy = policyOf(account ? planLimits(account.plan) : ANONYMOUS_LIMITS);
    limiter.peek(account ? accountKey(account.id) : clientKey(request.ip), policy.limits, request.receivedAt).then(
      (windows) => {
        showWindows(reply, windows, policy, request.receivedAt);
        done(err as Error);
      },
      () => done(err as Error),
    );
  };

  /**
   * The account each token (parsed from `Authorization`, so one entry whatever its spelling) last
   * authenticated as, when that took a wait (on
   * PostgreSQL every check does: the auth cache's fence). Only a guess, for `admitEarly`; the
   * check decides. A refusal forgets the value, so a revoked token is guessed at most once more.
   */
  const presumed = new Map<string, Account>();
  const presume = (token: string, account: Account): void => {
    if (presumed.has(token)) return void presumed.set(token, account);
    if (presumed.size >= PRESUMED_MAX_ENTRIES) presumed.clear();
    presumed.set(detachedToken(token), account);
  };

  /** Takes back one admitted consume; a limiter that cannot is not asked, and a failure is not the request's. */
  const refundConsume = (key: string, now: number): Promise<void> =>
    limiter?.refund ? Promise.resolve(limiter.refund(key, now)).catch(() => undefined) : Promise.resolve();

  /**
   * Takes back a consume that was made before its request's token was checked, once the check
   * did not confirm it: a refused token is never a call. Settles once the refund is done.
   */
  const giveBack = (decision: MaybePromise<Decision>, key: string, now: number): Promise<void> =>
    Promise.resolve(decision).then(
      (d) => (d.allowed ? refundConsume(key, now) : undefined),
      () => undefined,
    );

  /**
   * A token whose check waits (the PostgreSQL fence) and that authenticated before: its account's
   * consume is sent at the same time as the check instead of after it, one round trip fewer per
   * request. The check still decides. Its decision is used only when the check confirms the same
   * account on the same plan; otherwise the consume is given back (refunded if it was admitted)
   * and the request goes on as it would have: refused down the anonymous path, or consumed again
   * with the account and plan the check found. Until the check answers, a token revoked a moment
   * ago holds a place in its account's windows, which the refund frees.
   */
  const admitEarly = (request: FastifyRequest, reply: FastifyReply, auth: Promise<Authenticated>, token: string, guess: Account, done: HookDone): void => {
    const policy = policyOf(planLimits(guess.plan));
    const key = accountKey(guess.id);
    const now = request.receivedAt;
    let early: MaybePromise<Decision>;
    try {
      early = limiter!.consume(key, policy.limits, now);
    } catch (err) {
      early = Promise.reject(err as Error);
    }
    // Settled before the check may be: never an unhandled rejection (the check's outcome handles it).
    if (isPromise(early)) early.catch(() => undefined);
    whenReady(
      auth,
      (a) => {
        presume(token, a.account);
        if (a.account.id === guess.id && a.account.plan === guess.plan) {
          return whenReady(early, (d) => decided(request, reply, a, policy, d, done), done);
        }
        void giveBack(early, key, now);
        admit(request, reply, a, done);
      },
      // After the refund: a 503's headers then show the windows without this request.
      (err: unknown) => void giveBack(early, key, now).then(() => refused(request, reply, err, done, token)),
    );
  };

  // Callback hooks: with a cached token and the in-process limiter nothing here waits, and a
  // request then costs no promise at all (an async hook costs several, on every request).
  const verify = (request: FastifyRequest, reply: FastifyReply, done: HookDone, admitWith: typeof admit = admit): void => {
    let token: string;
    let auth: MaybePromise<Authenticated>;
    try {
      // The token, not the header as sent: every spelling of one token is one key below.
      token = bearerToken(request.headers.authorization);
      auth = deps.accounts.verifyToken(token, request.receivedAt);
    } catch (err) {
      return refused(request, reply, err, done);
    }
    // A cached token is answered at once: straight on, with no closures made for a promise.
    if (!isPromise(auth)) return admitWith(request, reply, auth, done);
    // Only what can be taken back is counted before the check.
    const canGuess = admitWith === admit && limiter?.refund !== undefined;
    const guess = canGuess ? presumed.get(token) : undefined;
    if (guess) return admitEarly(request, reply, auth, token, guess, done);
    whenReady(
      auth,
      (a) => {
        if (canGuess) presume(token, a.account);
        admitWith(request, reply, a, done);
      },
      (err) => refused(request, reply, err, done, token),
    );
  };
  // Every well-formed token is looked up, whatever its address spent without one: a request with
  // a valid token is judged by its account's windows alone (API.md), so an office behind one NAT
  // address is not locked out by one misconfigured script there. A refused token goes down the
  // anonymous path, limited per address; a header that is no well-formed token is refused unread.
  const tokenAccess: AccessHook = (request, reply, done) => verify(request, reply, done);
  const uncountedAccess: AccessHook = (request, reply, done) => verify(request, reply, done, admitUncounted);
  const publicAccess: AccessHook = (request, reply, done) => limitAnonymous(request, reply, null, done, PUBLIC_KEY_SUFFIX);

  app.addHook('onRequest', (request, reply, done) => {
    request.receivedAt = deps.now();
    // No route matched: nothing will run, but a path under /api answers its 404/405 only to
    // a request that passed the token check and the limiter, as a real endpoint would.
    if (request.is404 && accessOf(pathOf(request.url), undefined) === 'token') return tokenAccess(request, reply, done);
    done();
  });

  app.addHook('onRoute', (route) => {
    const access = accessOf(route.url, route.config);
    if (access === 'none') return;
    const endpoint = route.url.slice(API_PREFIX.length) || '/';
    const check = access === 'public' ? publicAccess : route.config?.uncounted ? uncountedAccess : tokenAccess;
    const hook: AccessHook = (request, reply, done) => {
      request.endpoint = endpoint;
      check(request, reply, done);
    };
    const existing = route.onRequest === undefined ? [] : Array.isArray(route.onRequest) ? route.onRequest : [route.onRequest];
    // First among the route's own hooks: nothing of the route runs before access is decided.
    route.onRequest = [hook, ...existing] as typeof route.onRequest;
  });

  return {
    refund(request) {
      if (request.account !== null && request.rateDecision !== null) void refundConsume(accountKey(request.account.id), request.receivedAt);
    },
  };
}

/**
 * Calls of the current UTC day, this request included: the account's day window counts every
 * request that passed the limiter, which is what a call is. Whenever a limiter lacks a window
 * (a restart, a Redis that restarted empty or went away) it rebuilds it from the recorded calls,
 * and /usage/stats reports this same window, so both agree without a database read per request.
 */
export function callsToday(request: FastifyRequest): number {
  return request.rateDecision?.windows.find((w) => w.window === 'day')?.used ?? 0;
}
