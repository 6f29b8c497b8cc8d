import type { FastifyBaseLogger } from 'fastify';
import type { Account } from '../domain/accounts/repositories.js';
import { serializerOf, type AnyOperation } from '../operations/operation.js';
import { asOwner, runCall, type CallSteps } from './call-steps.js';
import { createJob, routeBodyOf } from './operation.js';
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
 * POST /mcp), through the steps its own route's request passes (src/http/call-steps.ts), in the
 * same order: admitted by the account's windows (a 429 when one is full), the body validated by
 * the route's schema and validator, a slot of work in flight held by a probe (refunded when
 * refused), the run as the account's work, `data` written by the route's serializer, any error
 * answered with the route's status and envelope, and the call recorded in usage under the
 * operation's endpoint. As a job (`opts.job`, a dashboard check): the same until the run, then
 * the route's job branch (createJob) and its 202. What the caller's own request already did
 * (reading the body, the token check, draining) is not done twice.
 *
 * Before this, a tool call was the route's request injected into the app; that cost a second
 * whole request (light-my-request's request and response objects, routing, the hooks) and made
 * a tool call of ipv6_expand 3.4× the API call (bench/mcp.ts).
 */
export function operationCaller(deps: { routeDeps: RouteDeps; steps: CallSteps }): CallOperation {
  const { steps } = deps;
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
    const admitted = await steps.admit(account, receivedAt);
    Object.assign(headers, admitted.headers);
    if (admitted.refusal) throw admitted.refusal;
    const { validate, write } = of(op);
    if (!validate(body)) throw validationErrorFromAjv((validate as unknown as { errors: Parameters<typeof validationErrorFromAjv>[0] }).errors, 'body');
    // A job takes its slot of work in flight when it runs, as the route's job does.
    if (job) {
      const created = await createJob(deps.routeDeps, op, account.id, body as Record<string, unknown>);
      return { status: 202, body: ok(created, `job ${created.id} queued: ${op.path}`) };
    }
    const release = op.probe ? await steps.hold(account, receivedAt) : null;
    try {
      const run = () => runCall(op, deps.routeDeps, body, caller.signal);
      const { data, message } = release ? await asOwner(account, run) : await run();
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
      const failed = steps.failed(err, caller.log);
      ({ status, body: envelope } = failed);
      Object.assign(headers, failed.headers);
    }
    await steps.record?.({ accountId: caller.account.id, endpoint: op.path, status, durationMs: performance.now() - started, at: caller.receivedAt });
    return { status, body: envelope, headers, ...(error === undefined ? {} : { error }) };
  };
}
