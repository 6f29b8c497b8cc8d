import type { Socket } from 'node:net';
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
 *
 * A connection that has sent nothing yet (a browser's preconnect, a port check) is closed as the
 * shutdown begins: it holds no work, and Node's server.close() would wait for it, as it closes only
 * the connections idle between requests and stops timing out the silent ones. Such a connection
 * held a shutdown until the client dropped it (Chromium: about a minute) or the grace ran out.
 */
export function registerDraining(app: FastifyInstance): void {
  let draining = false;
  const connections = new Set<Socket>();
  app.server.on('connection', (socket: Socket) => {
    connections.add(socket);
    socket.once('close', () => connections.delete(socket));
  });
  app.addHook('preClose', (done) => {
    draining = true;
    for (const socket of connections) if (socket.bytesRead === 0) socket.destroy();
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
