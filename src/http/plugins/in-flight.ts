import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { inFlightLimit, planLimits } from '../../domain/accounts/plans.js';
import { utcTimestamp } from '../../domain/usage/service.js';
import { RateLimitError } from '../../errors.js';
import type { InFlightSlots } from '../../domain/in-flight.js';
import type { Account } from '../../domain/accounts/repositories.js';
import { accountKey, runAsOwner } from '../../domain/owner.js';
import { prefersRespondAsync } from '../operation.js';

declare module 'fastify' {
  interface FastifyContextConfig {
    /** The route probes the network: it counts against its account's work in flight (docs/api.md, "Rate limits"). */
    probe?: boolean;
  }
}

/** Seconds a client refused for work in flight is told to wait: one probe of theirs may answer by then. */
export const IN_FLIGHT_RETRY_AFTER_S = 1;

function inFlightError(plan: string, max: number, now: number): RateLimitError {
  const resetAt = utcTimestamp(now + IN_FLIGHT_RETRY_AFTER_S * 1000);
  return new RateLimitError(
    `too many probing requests at once for the ${plan} plan: at most ${max} in flight; try again when one of them has answered`,
    { limit: planLimits(plan).requests_per_minute, remaining: 0, reset_at: resetAt, window: 'concurrent' },
    { 'retry-after': String(IN_FLIGHT_RETRY_AFTER_S) },
  );
}

type HookDone = (err?: Error) => void;

/**
 * Takes one of `account`'s slots of work in flight: the function that gives it back, or the 429
 * (after `onRefused`: a refused call is taken back from the windows that counted it).
 */
export async function takeSlot(slots: InFlightSlots, account: Account, now: number, onRefused?: () => Promise<void>): Promise<() => void> {
  const max = inFlightLimit(account.plan);
  const release = await slots.tryAcquire(accountKey(account.id), max);
  if (release !== null) return release;
  await onRefused?.();
  throw inFlightError(account.plan, max, now);
}

/**
 * Work in flight per account on the routes marked `config: { probe: true }`. The check is the
 * route's own preHandler, so it runs after the token check (an onRequest hook, auth.ts) and
 * after validation: a refused or malformed request never takes a slot. The slot is given back
 * once, when the response has been sent or the client has hung up, whichever comes first; the
 * handler runs as its account's work (domain/owner.ts), so every dial it makes is counted to
 * that account's share of the socket budget.
 *
 * The slots are given (src/compose.ts builds them, through Redis with REDIS_URL, and closes
 * them): the job engine counts against the same ones.
 */
export function registerInFlight(
  app: FastifyInstance,
  opts: {
    slots: InFlightSlots;
    /** A request refused here was counted by the rate windows: a 429 is no call, so it is taken back. */
    onRefused?: (request: FastifyRequest) => Promise<void>;
  },
): void {
  const slots = opts.slots;

  /** Takes one of the account's slots; the owner to run the handler as, or null when it holds none. */
  const acquire = async (request: FastifyRequest, reply: FastifyReply): Promise<string | null> => {
    const account = request.account;
    // A job is only accepted here: it takes its slot when it runs, and waits queued until one is free.
    if (account === null || prefersRespondAsync(request.headers.prefer)) return null;
    const onRefused = opts.onRefused;
    const release = await takeSlot(slots, account, request.receivedAt || Date.now(), onRefused && (() => onRefused(request)));
    // The client may have left while Redis was asked: then nothing will answer, give it back now.
    if (reply.raw.destroyed || reply.raw.writableFinished) {
      release();
      return null;
    }
    // 'close' comes both after the last byte and when the client leaves early; onResponse
    // covers injected requests, whose response may not emit it.
    reply.raw.once('close', release);
    request.probeRelease = release;
    return accountKey(account.id);
  };

  // A callback hook for one reason: the rest of the request (the handler) must run inside
  // runAsOwner, so that its dials count to the account; an async hook cannot wrap what follows it.
  const check = (request: FastifyRequest, reply: FastifyReply, done: HookDone): void => {
    acquire(request, reply).then((owner) => (owner === null ? done() : runAsOwner(owner, () => done())), done);
  };

  const releaseOnResponse = (request: FastifyRequest, _reply: FastifyReply, done: HookDone): void => {
    request.probeRelease?.();
    done();
  };

  app.decorateRequest('probeRelease', null);
  // Hooks of the probe routes only: every other request runs none of this.
  app.addHook('onRoute', (route) => {
    if (route.config?.probe !== true) return;
    const pre = route.preHandler === undefined ? [] : Array.isArray(route.preHandler) ? route.preHandler : [route.preHandler];
    route.preHandler = [check, ...pre] as typeof route.preHandler;
    const post = route.onResponse === undefined ? [] : Array.isArray(route.onResponse) ? route.onResponse : [route.onResponse];
    route.onResponse = [...post, releaseOnResponse] as typeof route.onResponse;
  });
}

declare module 'fastify' {
  interface FastifyRequest {
    /** Gives back this request's slot of work in flight (idempotent); null when it holds none. */
    probeRelease: (() => void) | null;
  }
}
