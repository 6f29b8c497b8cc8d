import { randomBytes } from 'node:crypto';
import type { FastifyInstance } from 'fastify';
import { pathOf } from '../route-index.js';
import { round2 } from '../../lib/round.js';
import { HYGIENE_HEADERS } from './connection.js';

const INCOMING_REQUEST_ID = /^[A-Za-z0-9._:-]{1,128}$/;

/**
 * Request ids this process makes: a random prefix drawn once at start, then a counter, e.g.
 * `9f3c2a71d04e-1b`. Unique across restarts and instances (48 random bits) without a CSPRNG call
 * per request, which was a tenth of the request pipeline's own CPU; an id is a log key, not a secret.
 */
const REQUEST_ID_PREFIX = `${randomBytes(6).toString('hex')}-`;
let requestCounter = 0;

/** A caller's own X-Request-Id is kept when it is sane, so traces join up across services. */
export function genReqId(req: { headers: Record<string, string | string[] | undefined> }): string {
  const incoming = req.headers['x-request-id'];
  if (typeof incoming === 'string' && INCOMING_REQUEST_ID.test(incoming)) return incoming;
  return REQUEST_ID_PREFIX + (++requestCounter).toString(36);
}

/**
 * X-Request-Id and the hygiene headers (nosniff, no-store) on every response, in one hook; one
 * pino line per request, which never carries a header.
 */
export function registerObservability(app: FastifyInstance): void {
  // Decided once: the level does not change at run time, and a disabled logger costs nothing then.
  const log = app.log as { isLevelEnabled?: (level: string) => boolean };
  const logRequests = typeof log.isLevelEnabled === 'function' && log.isLevelEnabled('info');
  // Nothing here waits: a plain hook that calls done, not an async one whose promise Fastify would wait on.
  app.addHook('onRequest', (request, reply, done) => {
    reply.header('x-request-id', request.id);
    reply.header('x-content-type-options', HYGIENE_HEADERS['x-content-type-options']);
    reply.header('cache-control', HYGIENE_HEADERS['cache-control']);
    done();
  });
  // No hook at all when the level drops request lines: nothing to do per response then.
  if (!logRequests) return;
  app.addHook('onResponse', async (request, reply) => {
    // The request's logger binds its id (reqId).
    request.log.info(
      {
        method: request.method,
        path: pathOf(request.url),
        status: reply.statusCode,
        ms: round2(reply.elapsedTime),
        account: request.account?.id,
        ip: request.ip,
      },
      'request',
    );
  });
}
