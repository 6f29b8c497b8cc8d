import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import type { Account } from '../../domain/accounts/repositories.js';
import { asOwner, type CallSteps } from '../call-steps.js';
import { prefersRespondAsync } from '../operation.js';

declare module 'fastify' {
  interface FastifyContextConfig {
    /** The route probes the network: it counts against its account's work in flight (docs/api.md, "Rate limits"). */
    probe?: boolean;
  }
}

type HookDone = (err?: Error) => void;

/**
 * Work in flight per account on the routes marked `config: { probe: true }`: the hold step of
 * src/http/call-steps.ts. The check is the route's own preHandler, so it runs after the token
 * check (an onRequest hook, auth.ts) and after validation: a refused or malformed request never
 * takes a slot. The slot is given back once, when the response has been sent or the client has
 * hung up, whichever comes first; the handler runs as its account's work (domain/owner.ts), so
 * every dial it makes is counted to that account's share of the socket budget.
 *
 * The slots behind `hold` are given (src/compose.ts builds them, through Redis with REDIS_URL,
 * and closes them): the job engine counts against the same ones.
 */
export function registerInFlight(app: FastifyInstance, steps: Pick<CallSteps, 'hold'>): void {
  /** Takes one of the account's slots; the account to run the handler as, or null when it holds none. */
  const acquire = async (request: FastifyRequest, reply: FastifyReply): Promise<Account | null> => {
    const account = request.account;
    // A job is only accepted here: it takes its slot when it runs, and waits queued until one is free.
    if (account === null || prefersRespondAsync(request.headers.prefer)) return null;
    const release = await steps.hold(account, request.receivedAt || Date.now());
    // The client may have left while Redis was asked: then nothing will answer, give it back now.
    if (reply.raw.destroyed || reply.raw.writableFinished) {
      release();
      return null;
    }
    // 'close' comes both after the last byte and when the client leaves early; onResponse
    // covers injected requests, whose response may not emit it.
    reply.raw.once('close', release);
    request.probeRelease = release;
    return account;
  };

  // A callback hook for one reason: the rest of the request (the handler) must run inside
  // runAsOwner, so that its dials count to the account; an async hook cannot wrap what follows it.
  const check = (request: FastifyRequest, reply: FastifyReply, done: HookDone): void => {
    acquire(request, reply).then((account) => (account === null ? done() : asOwner(account, () => done())), done);
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
