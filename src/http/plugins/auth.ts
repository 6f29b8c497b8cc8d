import ipaddr from 'ipaddr.js';
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { bearerToken, type AccountService, type Authenticated } from '../../domain/accounts/service.js';
import { hashToken } from '../../domain/accounts/tokens.js';
import { AppError, UnauthorizedError } from '../../errors.js';
import { decide, type Decision, type RateLimiter, type WindowState } from '../../domain/usage/rate-limit.js';
import type { Account } from '../../domain/accounts/repositories.js';
import { accountKey } from '../../domain/owner.js';
import type { CallSteps } from '../call-steps.js';
import { ANONYMOUS_PLAN, ANONYMOUS_POLICY, policyOf, rateHeaders, rateLimitError, type RatePolicy } from '../rate-policy.js';
import { pathOf } from '../route-index.js';
import { LRUCache } from 'lru-cache';

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
     * Routes whose requests are no calls (reading a job, docs/security.md): a token is needed, but the
     * plan's windows are only shown in the headers, never spent, and usage records nothing.
     */
    uncounted?: boolean;
    /**
     * A route outside /api that takes the API's tokens all the same (POST /mcp): its requests
     * are authenticated and limited exactly as an /api route's.
     */
    bearer?: boolean;
  }
}

export const API_PREFIX = '/api';
/** Static assets of the interactive reference: neither authenticated nor limited. */
export const DOCS_PREFIX = `${API_PREFIX}/docs`;
/** Tokens whose account is remembered for the headers of a 503 (see `lastAccounts`); beyond this the least recently used is forgotten. */
const LAST_ACCOUNTS_MAX_ENTRIES = 10_000;

/** Appended to an anonymous client's key for the public routes (the OpenAPI document): their own budget. */
export const PUBLIC_KEY_SUFFIX = '|public';

/** The rate limiter key of an anonymous client: its IPv4 address, or its IPv6 /64. */
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

function setRateHeaders(reply: FastifyReply, decision: Decision, policy: RatePolicy): void {
  reply.headers(rateHeaders(decision, policy));
}

/** The headers of windows as they stand (`peek`), for an answer that spent nothing. */
function showWindows(reply: FastifyReply, windows: readonly WindowState[], policy: RatePolicy, now: number): void {
  setRateHeaders(reply, decide(true, windows.map((w) => w.used), policy.limits, now), policy);
}

/** The usage endpoint of a request that reached no route, so junk paths add one row, not many. */
export const UNMATCHED_ENDPOINT = '(unmatched)';

/** What a route under /api asks of a request before its handler may run. */
export type Access = 'token' | 'public' | 'none';

/**
 * The access a route needs, from the route itself (its full URL pattern and its config), never
 * from the URL a client sent: `/%61pi/user`, `http://host/api/user` and `/api/user` reach the
 * same route and so the same check.
 */
export function accessOf(url: string, config: { public?: boolean; bearer?: boolean } | undefined): Access {
  if (url !== API_PREFIX && !url.startsWith(`${API_PREFIX}/`)) return config?.bearer ? 'token' : 'none';
  if (url === DOCS_PREFIX || url.startsWith(`${DOCS_PREFIX}/`)) return 'none';
  return config?.public ? 'public' : 'token';
}

/** The account of a request that passed the token check; a route that needs one never runs without it. */
export function accountOf(request: FastifyRequest): Account {
  if (request.account === null) throw new UnauthorizedError();
  return request.account;
}

/**
 * Authentication and rate limiting of every /api request, in three plain steps: the token is
 * checked; a valid one is limited per account by its plan, anything else (no token, a bad one,
 * public routes) per client IP at the free plan's figures: an address gets that many 401s, then
 * 429s (docs/security.md says what that does and does not stop). Every response,
 * errors included, carries the X-RateLimit-* headers of whichever limiter judged the request.
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
    /** The admit step (src/http/call-steps.ts): an account's request is counted as every call is. */
    steps: Pick<CallSteps, 'admit'>;
  },
): void {
  app.decorateRequest('account', null);
  app.decorateRequest('tokenId', null);
  app.decorateRequest('rateDecision', null);
  app.decorateRequest('receivedAt', 0);
  app.decorateRequest('endpoint', UNMATCHED_ENDPOINT);
  app.decorateRequest('uncounted', false);

  const limiter = deps.limiter;

  /**
   * The account each token last authenticated as, by the token's hash (so no token text is kept
   * here, and every spelling of one token is one entry). When the database cannot be reached, a
   * 503 then shows that account's windows rather than the address's. A refusal forgets the token.
   */
  const lastAccounts = new LRUCache<string, Account>({ max: LAST_ACCOUNTS_MAX_ENTRIES });
  const remember = (hash: string, account: Account): void => {
    lastAccounts.set(hash, account);
  };

  /**
   * The anonymous path: per client IP at the free plan's figures. The public document has a
   * budget of its own (same figures, `suffix` PUBLIC_KEY_SUFFIX): a client that got its token
   * wrong ten times can still read how to get it right.
   */
  const limitAnonymous = async (request: FastifyRequest, reply: FastifyReply, suffix = ''): Promise<void> => {
    if (!limiter) return;
    const now = request.receivedAt;
    const decision = await limiter.consume(clientKey(request.ip) + suffix, ANONYMOUS_POLICY.limits, now);
    setRateHeaders(reply, decision, ANONYMOUS_POLICY);
    if (!decision.allowed) throw rateLimitError(decision, ANONYMOUS_PLAN, ANONYMOUS_POLICY.limits, now, true);
  };

  /**
   * The token check failed. A refused token goes down the anonymous path (limited per address,
   * then answered with its 401 or 403); anything else is a real failure (the database cannot be
   * reached: a 503), answered with the headers of the windows as they stand, counting nothing:
   * the account's when this instance knows the token's account, else the address's.
   */
  const refused = async (request: FastifyRequest, reply: FastifyReply, err: unknown, hash: string | undefined): Promise<never> => {
    if (err instanceof AppError && (err.code === 'unauthorized' || err.code === 'forbidden')) {
      if (hash !== undefined) lastAccounts.delete(hash);
      await limitAnonymous(request, reply);
      throw err;
    }
    if (limiter) {
      const account = hash === undefined ? undefined : lastAccounts.get(hash);
      const policy = account ? policyOf(account.plan) : ANONYMOUS_POLICY;
      const key = account ? accountKey(account.id) : clientKey(request.ip);
      const windows = await limiter.peek(key, policy.limits, request.receivedAt).catch(() => null);
      if (windows) showWindows(reply, windows, policy, request.receivedAt);
    }
    throw err;
  };

  /**
   * Every well-formed token is looked up, whatever its address spent without one: a request with
   * a valid token is judged by its account's windows alone (docs/security.md), so an office behind one NAT
   * address is not locked out by one misconfigured script there. A token the store lately did not
   * know is refused from the account service's memo, without a read; a header that is no
   * well-formed token is refused unread and unhashed.
   */
  const authenticate = async (request: FastifyRequest, reply: FastifyReply): Promise<Authenticated> => {
    let hash: string | undefined;
    try {
      // The token's hash, not the header as sent: every spelling of one token is one key below.
      hash = hashToken(bearerToken(request.headers.authorization));
      const auth = await deps.accounts.verifyTokenHash(hash, request.receivedAt);
      remember(hash, auth.account);
      return auth;
    } catch (err) {
      return refused(request, reply, err, hash);
    }
  };

  type AccessHook = (request: FastifyRequest, reply: FastifyReply) => Promise<void>;

  /** The authenticated account's request, counted in its plan's windows (a 429 when one is full). */
  const tokenAccess: AccessHook = async (request, reply) => {
    const auth = await authenticate(request, reply);
    const admitted = await deps.steps.admit(auth.account, request.receivedAt);
    reply.headers(admitted.headers);
    // Set once the windows have answered: a refused request is still its account's (usage records its 429).
    request.account = auth.account;
    request.tokenId = auth.tokenId;
    request.rateDecision = admitted.decision;
    if (admitted.refusal) throw admitted.refusal;
  };

  /** An `uncounted` route's request: its windows shown as they are, nothing spent. */
  const uncountedAccess: AccessHook = async (request, reply) => {
    const auth = await authenticate(request, reply);
    request.account = auth.account;
    request.tokenId = auth.tokenId;
    request.uncounted = true;
    if (!limiter) return;
    const policy = policyOf(auth.account.plan);
    const windows = await limiter.peek(accountKey(auth.account.id), policy.limits, request.receivedAt).catch(() => null);
    if (windows) showWindows(reply, windows, policy, request.receivedAt);
  };

  const publicAccess: AccessHook = (request, reply) => limitAnonymous(request, reply, PUBLIC_KEY_SUFFIX);

  app.addHook('onRequest', async (request, reply) => {
    request.receivedAt = deps.now();
    // No route matched: nothing will run, but a path under /api answers its 404/405 only to
    // a request that passed the token check and the limiter, as a real endpoint would.
    if (request.is404 && accessOf(pathOf(request.url), undefined) === 'token') await tokenAccess(request, reply);
  });

  app.addHook('onRoute', (route) => {
    const access = accessOf(route.url, route.config);
    if (access === 'none') return;
    const endpoint = route.url.startsWith(API_PREFIX) ? route.url.slice(API_PREFIX.length) || '/' : route.url;
    const check = access === 'public' ? publicAccess : route.config?.uncounted ? uncountedAccess : tokenAccess;
    const hook: AccessHook = (request, reply) => {
      request.endpoint = endpoint;
      return check(request, reply);
    };
    const existing = route.onRequest === undefined ? [] : Array.isArray(route.onRequest) ? route.onRequest : [route.onRequest];
    // First among the route's own hooks: nothing of the route runs before access is decided.
    route.onRequest = [hook, ...existing] as typeof route.onRequest;
  });
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
