import type { FastifyBaseLogger } from 'fastify';
import type { Account } from '../domain/accounts/repositories.js';
import type { InFlightSlots } from '../domain/in-flight.js';
import { accountKey, runAsOwner } from '../domain/owner.js';
import { ClientGoneError, RateLimitError } from '../errors.js';
import { runOperation, serializerOf, type AnyOperation } from '../operations/operation.js';
import { NEVER, createJob, routeBodyOf } from './operation.js';
import { CLIENT_GONE_STATUS } from './client-gone.js';
import type { AccessControl } from './plugins/auth.js';
import { errorResponseOf } from './plugins/errors.js';
import { takeSlot } from './plugins/in-flight.js';
import type { Call } from './plugins/usage.js';
import type { HttpMetrics } from './plugins/metrics.js';
import { ok } from './reply.js';
import type { RouteDeps } from './routes/deps.js';
import { validationErrorFromAjv, validatorCompiler } from './validation.js';

/** What an operation call made inside another request answered: as its own route would have. */
export interface CallAnswer {
  status: number;
  /** The envelope, as the route's serializer writes it (then parsed). */
  body: unknown;
  /** Its headers (rate limits, Retry-After), lowercase names. */
  headers: Record<string, string>;
  /** The error the answer was made from, when it is a refusal or a failure: a page shows it in its own words. */
  error?: unknown;
}

/** Who calls, and when the request that carries the call arrived. */
export interface Caller {
  account: Account;
  receivedAt: number;
  /** Aborts when the client that asked is gone (probes only). */
  signal: AbortSignal;
  log: FastifyBaseLogger;
}

/** `job`: the call as a job (Prefer: respond-async): a 202 with the job, its run queued. */
export type CallOperation = (caller: Caller, op: AnyOperation, body: unknown, opts?: { job?: boolean }) => Promise<CallAnswer>;

/**
 * A synchronous call of an operation made inside another request (each MCP tool call inside
 * POST /mcp), through the steps its own route's request passes, in the same order and with the
 * same functions: the call counted in the account's windows (a 429 when one is full), the body
 * validated by the route's schema and validator, a slot of work in flight for a probe (refunded
 * when refused), the run as the account's work, `data` written by the route's serializer, any
 * error answered with the route's status and envelope, and the call recorded in usage under the
 * operation's endpoint. As a job (`opts.job`, a dashboard check): the same until the run, then the
 * route's job branch (createJob) and its 202. What the caller's own request already did (reading the body, the token
 * check, draining) is not done twice.
 *
 * Before this, a tool call was the route's request injected into the app; that cost a second
 * whole request (light-my-request's request and response objects, routing, the hooks) and made
 * a tool call of ipv6_expand 3.4× the API call (bench/mcp.ts).
 */
export function operationCaller(deps: {
  routeDeps: RouteDeps;
  access: AccessControl;
  slots: InFlightSlots;
  /** null: usage is not recorded (AppDeps.recorder absent). */
  record: ((call: Call) => Promise<void>) | null;
  /** Told of a call's 429, as the app's onError hook is of a request's (GET /metrics); null when metrics are off. */
  metrics?: Pick<HttpMetrics, 'rateLimited'> | null;
}): CallOperation {
  const compiled = new Map<AnyOperation, { validate: (body: unknown) => boolean; write: (data: unknown) => string }>();
  const of = (op: AnyOperation) => {
    let c = compiled.get(op);
    if (!c) {
      const validate = validatorCompiler({ schema: routeBodyOf(op), httpPart: 'body', method: 'POST', url: op.path }) as (body: unknown) => boolean;
      compiled.set(op, (c = { validate, write: serializerOf(op.data) }));
    }
    return c;
  };

  const answer = async (caller: Caller, op: AnyOperation, body: unknown, headers: Record<string, string>, job: boolean): Promise<{ status: number; body: unknown }> => {
    const { account, receivedAt } = caller;
    const counted = await deps.access.countCall(account, receivedAt);
    Object.assign(headers, counted.headers);
    if (counted.refusal) throw counted.refusal;
    const { validate, write } = of(op);
    if (!validate(body)) throw validationErrorFromAjv((validate as unknown as { errors: Parameters<typeof validationErrorFromAjv>[0] }).errors, 'body');
    // A job takes its slot of work in flight when it runs, as the route's job does.
    if (job) {
      const created = await createJob(deps.routeDeps, op, account.id, body as Record<string, unknown>);
      return { status: 202, body: ok(created, `job ${created.id} queued: ${op.path}`) };
    }
    const release = op.probe ? await takeSlot(deps.slots, account, receivedAt, () => deps.access.refundCall(account, receivedAt)) : null;
    try {
      // A synchronous call (a tool call): the synchronous bound of items.
      const run = () => runOperation(op, deps.routeDeps, body, { signal: op.probe ? caller.signal : NEVER, maxItems: op.bounds?.sync });
      const { data, message } = release ? await runAsOwner(accountKey(account.id), run) : await run();
      return { status: 200, body: ok(JSON.parse(write(data)) as unknown, message) };
    } finally {
      release?.();
    }
  };

  return async (caller, op, body, opts = {}) => {
    const started = performance.now();
    const headers: Record<string, string> = {};
    let status: number;
    let envelope: unknown;
    let error: unknown;
    try {
      ({ status, body: envelope } = await answer(caller, op, body, headers, opts.job === true));
    } catch (err) {
      error = err;
      if (err instanceof ClientGoneError) {
        status = CLIENT_GONE_STATUS;
        envelope = null;
      } else {
        if (err instanceof RateLimitError) deps.metrics?.rateLimited(err.details?.window);
        const refused = errorResponseOf(err);
        if (refused.unexpected) caller.log.error({ err }, 'unhandled error');
        ({ status, body: envelope } = refused);
        Object.assign(headers, refused.headers);
      }
    }
    await deps.record?.({ accountId: caller.account.id, endpoint: op.path, status, durationMs: performance.now() - started, at: caller.receivedAt });
    return { status, body: envelope, headers, ...(error === undefined ? {} : { error }) };
  };
}
