import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { CONCURRENT_PROBES, DEFAULT_PLAN, isPlanName, planLimits } from '../../domain/accounts/plans.js';
import { utcTimestamp } from '../../domain/usage/service.js';
import { RateLimitError } from '../../errors.js';
import { runAsOwner } from '../../infra/net/owner.js';

declare module 'fastify' {
  interface FastifyContextConfig {
    /** The route probes the network: it counts against its account's work in flight (API.md, "Rate limits"). */
    probe?: boolean;
  }
}

/** Seconds a client refused for work in flight is told to wait: one probe of theirs may answer by then. */
export const CONCURRENT_RETRY_AFTER_S = 1;

/** The key an account's work in flight and its share of the socket budget are counted by. */
export function ownerKey(accountId: number): string {
  return `acct:${accountId}`;
}

/** The owner of a request's probes: its account, or undefined when it has none. */
export function ownerOf(request: FastifyRequest): string | undefined {
  return request.account === null ? undefined : ownerKey(request.account.id);
}

/**
 * Probing requests in flight per owner, in this process. Several instances behind one Redis
 * each count their own: the per-account maximum then holds per instance.
 */
export class ProbeSlots {
  readonly #held = new Map<string, number>();

  /** Takes a slot when `owner` holds fewer than `max`; false when it holds them all. */
  tryAcquire(owner: string, max: number): boolean {
    const held = this.#held.get(owner) ?? 0;
    if (held >= max) return false;
    this.#held.set(owner, held + 1);
    return true;
  }

  release(owner: string): void {
    const held = (this.#held.get(owner) ?? 0) - 1;
    if (held > 0) this.#held.set(owner, held);
    else this.#held.delete(owner);
  }

  heldBy(owner: string): number {
    return this.#held.get(owner) ?? 0;
  }
}

function concurrentError(plan: string, max: number, now: number): RateLimitError {
  const resetAt = utcTimestamp(now + CONCURRENT_RETRY_AFTER_S * 1000);
  return new RateLimitError(
    `too many probing requests at once for the ${plan} plan: at most ${max} in flight; try again when one of them has answered`,
    { limit: planLimits(plan).requests_per_minute, remaining: 0, reset_at: resetAt, window: 'concurrent' },
    { 'retry-after': String(CONCURRENT_RETRY_AFTER_S) },
  );
}

type HookDone = (err?: Error) => void;

/**
 * Work in flight per account on the routes marked `config: { probe: true }`. The check is the
 * route's own preHandler, so it runs after the token check (an onRequest hook, auth.ts) and
 * after validation: a refused or malformed request never takes a slot. The slot is given back
 * once, when the response has been sent or the client has hung up, whichever comes first; the
 * handler runs as its account's work (infra/net/owner.ts), so every dial it makes is counted to
 * that account's share of the socket budget.
 */
export function registerConcurrency(app: FastifyInstance, slots: ProbeSlots = new ProbeSlots()): ProbeSlots {
  const check = (request: FastifyRequest, reply: FastifyReply, done: HookDone): void => {
    const account = request.account;
    if (account === null) return done();
    const owner = ownerKey(account.id);
    const max = CONCURRENT_PROBES[isPlanName(account.plan) ? account.plan : DEFAULT_PLAN];
    if (!slots.tryAcquire(owner, max)) return done(concurrentError(account.plan, max, request.receivedAt || Date.now()));
    let held = true;
    const release = (): void => {
      if (!held) return;
      held = false;
      slots.release(owner);
    };
    // 'close' comes both after the last byte and when the client leaves early; onResponse
    // covers injected requests, whose response may not emit it.
    reply.raw.once('close', release);
    request.probeRelease = release;
    runAsOwner(owner, () => done());
  };

  app.decorateRequest('probeRelease', null);
  app.addHook('onResponse', (request, _reply, done) => {
    request.probeRelease?.();
    done();
  });
  app.addHook('onRoute', (route) => {
    if (route.config?.probe !== true) return;
    const existing = route.preHandler === undefined ? [] : Array.isArray(route.preHandler) ? route.preHandler : [route.preHandler];
    route.preHandler = [check, ...existing] as typeof route.preHandler;
  });
  return slots;
}

declare module 'fastify' {
  interface FastifyRequest {
    /** Gives back this request's slot of work in flight (idempotent); null when it holds none. */
    probeRelease: (() => void) | null;
  }
}
