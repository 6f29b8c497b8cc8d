import type { FastifyBaseLogger } from 'fastify';
import { inFlightLimit, planLimits } from '../domain/accounts/plans.js';
import type { Account } from '../domain/accounts/repositories.js';
import type { JobError } from '../domain/jobs/types.js';
import type { InFlightSlots } from '../domain/in-flight.js';
import { accountKey, runAsOwner } from '../domain/owner.js';
import type { Decision, RateLimiter } from '../domain/usage/rate-limit.js';
import { outcomeOf, utcDay, utcTimestamp } from '../domain/usage/service.js';
import { errorEnvelope } from '../error-answers.js';
import { RateLimitError } from '../errors.js';
import type { GroupCommitRecorder } from '../infra/usage/group-commit.js';
import { round2 } from '../lib/round.js';
import { DAY_MS } from '../lib/time.js';
import { runOperation, type AnyOperation, type OperationDeps } from '../operations/operation.js';
import { CLIENT_GONE_STATUS } from './client-gone.js';
import type { AnswerError } from './plugins/errors.js';
import { countRateLimited, type HttpMetrics } from './plugins/metrics.js';
import { policyOf, rateHeaders, rateLimitError } from './rate-policy.js';

/**
 * The steps of one call of an operation by an account, defined once here and taken by both ways
 * a call arrives:
 *
 *   step     what it does                                    the route's request (Fastify)     a call inside a request (calls.ts)
 *   admit    counted in the plan's windows: rate headers;    auth.ts, the route's onRequest    first
 *            a 429 when a window is full
 *   hold     a probe takes a slot of its account's work in   in-flight.ts, the route's         after validation (not for a job)
 *            flight; refused: the call is refunded, a 429      preHandler
 *   run      the operation, as its account's work when it    operation.ts's handler, inside    inside asOwner
 *            holds a slot; a probe stops when its client       in-flight.ts's runAsOwner
 *            hangs up
 *   failed   anything thrown: its status, envelope and       errors.ts's error handler, and    its catch
 *            headers, logged as the operator needs it; a       metrics.ts's onError for the 429
 *            429 is counted for GET /metrics
 *   record   the call's usage row, written before the        usage.ts, onSend                  last
 *            answer leaves
 *
 * Fastify splits the route's request into hooks (admission before the body is read, the slot
 * after the body is valid, the record before the response is sent); calls.ts runs the same
 * steps in the same order in one function. A change to what a call is admitted, refused,
 * answered or recorded as is made here.
 */

/** A signal that never aborts: operations that ignore client hang-ups need no listener per request. */
export const NEVER = new AbortController().signal;

/** Seconds a client refused for work in flight is told to wait: one probe of theirs may answer by then. */
export const IN_FLIGHT_RETRY_AFTER_S = 1;

/** One call as usage records it: whose, of which endpoint, how it ended and how long it took. */
export interface Call {
  accountId: number;
  endpoint: string;
  status: number;
  durationMs: number;
  /** When it arrived, epoch ms. */
  at: number;
}

/** What the windows said of a call: its rate headers, and the 429 to answer when one is full. */
export interface Admission {
  /** The account's windows after this call (for /usage/stats); null without a limiter. */
  decision: Decision | null;
  /** X-RateLimit-* and RateLimit-Policy; none without a limiter. */
  headers: Record<string, string>;
  refusal: RateLimitError | null;
}

/** What a refused or failed call answers: as the route's error handler would. */
export interface Failure {
  status: number;
  /** The error envelope; null when the client is gone (CLIENT_GONE_STATUS, nothing is sent). */
  body: JobError | null;
  headers: Record<string, string>;
}

/** Gives a held slot of work in flight back (idempotent). */
export type Release = () => void;

export interface CallSteps {
  /** Counts one call of `account` arrived at `at` in its plan's windows. */
  admit(account: Account, at: number): Promise<Admission>;
  /** A call admitted is refused after all (a 429): it is not a call, so it is taken back from the windows. */
  refund(account: Account, at: number): Promise<void>;
  /** Takes one of `account`'s slots of work in flight; refused, the call is refunded and the 429 thrown. */
  hold(account: Account, at: number): Promise<Release>;
  /** What `thrown` answers, logged to `log`; a 429 is counted for GET /metrics. */
  failed(thrown: unknown, log: FastifyBaseLogger): Failure;
  /** Writes the call's usage row; null when usage is not recorded (AppServices.recorder null). */
  record: ((call: Call) => Promise<void>) | null;
}

function inFlightError(plan: string, max: number, now: number): RateLimitError {
  const resetAt = utcTimestamp(now + IN_FLIGHT_RETRY_AFTER_S * 1000);
  return new RateLimitError(
    `too many probing requests at once for the ${plan} plan: at most ${max} in flight; try again when one of them has answered`,
    { limit: planLimits(plan).requests_per_minute, remaining: 0, reset_at: resetAt, window: 'concurrent' },
    { 'retry-after': String(IN_FLIGHT_RETRY_AFTER_S) },
  );
}

/**
 * The hold step over `slots`: one of the account's slots (its plan's inFlightLimit), or the 429
 * after `refund` (a refused call is taken back from the windows that counted it).
 */
export function slotHolder(slots: InFlightSlots, refund?: (account: Account, at: number) => Promise<void>): CallSteps['hold'] {
  return async (account, at) => {
    const max = inFlightLimit(account.plan);
    const release = await slots.tryAcquire(accountKey(account.id), max);
    if (release !== null) return release;
    await refund?.(account, at);
    throw inFlightError(account.plan, max, at);
  };
}

/**
 * Writes calls through the group commit: resolves once the record is written, or kept to be
 * written when the store is back (the recorder logs an outage once).
 */
export function callRecorder(recorder: GroupCommitRecorder): (call: Call) => Promise<void> {
  // The text of the day being recorded, made once a day rather than once per request: formatting
  // it (a Date and its ISO text) was 3 % of the CPU of a cheap request (bench/auth-overhead.ts).
  let today = { day: -1, text: '' };
  const dayOf = (at: number): string => {
    const day = Math.floor(at / DAY_MS);
    if (day !== today.day) today = { day, text: utcDay(at) };
    return today.text;
  };
  return (call) =>
    recorder.record({
      account_id: call.accountId,
      day: dayOf(call.at),
      endpoint: call.endpoint,
      outcome: outcomeOf(call.status),
      duration_ms: round2(call.durationMs),
      at: call.at,
    });
}

/** The run step: a synchronous call of `op` (its synchronous bound of items); only a probe listens to `signal`. */
export function runCall(op: AnyOperation, deps: OperationDeps, body: unknown, signal: AbortSignal): Promise<{ data: unknown; message: string }> {
  return runOperation(op, deps, body, { signal: op.probe ? signal : NEVER, maxItems: op.bounds?.sync });
}

/** Runs `work` as `account`'s work: every dial it makes counts to that account's share of the socket budget (domain/owner.ts). */
export function asOwner<T>(account: Account, work: () => T): T {
  return runAsOwner(accountKey(account.id), work);
}

/** The steps over the app's collaborators; src/app.ts builds one set for its hooks and its calls. */
export function callSteps(deps: {
  /** null: authentication alone, no windows, no rate headers. */
  limiter: RateLimiter | null;
  slots: InFlightSlots;
  /** null: usage is not recorded. */
  recorder: GroupCommitRecorder | null;
  /** What anything thrown answers, and how it is logged (src/http/plugins/errors.ts). */
  answer: AnswerError;
  /** null when metrics are off. */
  metrics: Pick<HttpMetrics, 'rateLimited'> | null;
}): CallSteps {
  const { limiter, answer, metrics } = deps;
  const refund = async (account: Account, at: number): Promise<void> => {
    // A refund that fails is not the request's failure.
    await limiter?.refund?.(accountKey(account.id), at).catch(() => undefined);
  };
  return {
    async admit(account, at) {
      if (!limiter) return { decision: null, headers: {}, refusal: null };
      const policy = policyOf(account.plan);
      const decision = await limiter.consume(accountKey(account.id), policy.limits, at);
      return { decision, headers: rateHeaders(decision, policy), refusal: decision.allowed ? null : rateLimitError(decision, account.plan, policy.limits, at, false) };
    },
    refund,
    hold: slotHolder(deps.slots, refund),
    failed(thrown, log) {
      countRateLimited(metrics, thrown);
      const error = answer(thrown, log);
      if (error === null) return { status: CLIENT_GONE_STATUS, body: null, headers: {} };
      return { status: error.status, body: errorEnvelope(error), headers: error.headers ?? {} };
    },
    record: deps.recorder ? callRecorder(deps.recorder) : null,
  };
}
