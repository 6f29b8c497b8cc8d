import type { FastifyInstance } from 'fastify';
import { ServiceUnavailableError } from '../../errors.js';

/** Retry-After on the 503s of a server that is shutting down: another instance, or this one restarted. */
export const DRAINING_RETRY_AFTER_S = 1;

/**
 * A server that is shutting down (app.close() has begun) finishes what it was doing and takes
 * nothing new: a request that still arrives on an open keep-alive connection gets 503
 * `service_unavailable` with Retry-After before anything else runs (no token check, no call
 * counted), and every answer from then on closes its connection, so clients and load balancers
 * move on. Fastify's own 503 for this case is turned off (`return503OnClosing: false`): its body is
 * not the envelope.
 */
export function registerDraining(app: FastifyInstance): void {
  let draining = false;
  app.addHook('preClose', (done) => {
    draining = true;
    done();
  });
  // Callback hooks: they run on every request, and cost nothing but a flag test until shutdown.
  app.addHook('onRequest', (_request, reply, done) => {
    if (!draining) return done();
    reply.header('connection', 'close');
    done(new ServiceUnavailableError('the server is shutting down; send the request again, to another instance or to this one once it is back', DRAINING_RETRY_AFTER_S));
  });
  app.addHook('onSend', (_request, reply, payload, done) => {
    if (draining) reply.header('connection', 'close');
    done(null, payload);
  });
}
