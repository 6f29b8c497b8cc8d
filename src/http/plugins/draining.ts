import type { IncomingMessage } from 'node:http';
import type { Socket } from 'node:net';
import type { FastifyInstance } from 'fastify';
import { ServiceUnavailableError } from '../../errors.js';

/** Retry-After on the 503s of a server that is shutting down: another instance, or this one restarted. */
export const DRAINING_RETRY_AFTER_S = 1;

/**
 * A server that is shutting down (app.close() has begun) finishes what it was doing and takes
 * nothing new: a request that still arrives on an open connection (a keep-alive one, or one
 * pipelined behind a request in flight) gets 503 `service_unavailable` with Retry-After before
 * anything else runs (no token check, no call counted), and the last answer on each connection
 * closes it, so clients and load balancers move on. Fastify's own 503 for this case is turned off
 * (`return503OnClosing: false`): its body is not the envelope. New connections are refused: Fastify
 * closes the listening socket as the shutdown begins (docs/operations.md, "Shutting down").
 *
 * "The last answer": HTTP/1.1 answers a connection's requests in order, and Node drops the answers
 * queued behind one that says `Connection: close`. So an answer with requests behind it on its
 * connection keeps the connection (even Fastify's own `close` while closing is taken off), the
 * last one closes it, and a connection left idle once its answers are out is closed as well.
 *
 * A connection that has sent nothing yet (a browser's preconnect, a port check) is closed as the
 * shutdown begins: it holds no work, and Node's server.close() would wait for it, as it closes only
 * the connections idle between requests and stops timing out the silent ones. Such a connection
 * held a shutdown until the client dropped it (Chromium: about a minute) or the grace ran out.
 */
export function registerDraining(app: FastifyInstance): void {
  let draining = false;
  const connections = new Set<Socket>();
  // Per connection, the number of the latest request it brought; per request, its own.
  const latest = new WeakMap<Socket, number>();
  const numberOf = new WeakMap<IncomingMessage, number>();
  app.server.on('connection', (socket: Socket) => {
    connections.add(socket);
    socket.once('close', () => connections.delete(socket));
  });
  // Node's own event, ahead of Fastify's listener (a 503 is answered within it): a pipelined
  // request is counted the moment it is parsed, before any hook runs.
  app.server.prependListener('request', (request: IncomingMessage) => {
    const n = (latest.get(request.socket) ?? 0) + 1;
    latest.set(request.socket, n);
    numberOf.set(request, n);
  });
  app.addHook('preClose', (done) => {
    draining = true;
    for (const socket of connections) if (socket.bytesRead === 0) socket.destroy();
    done();
  });
  // Callback hooks: they run on every request, and cost nothing but a flag test until shutdown.
  app.addHook('onRequest', (_request, _reply, done) => {
    if (!draining) return done();
    done(new ServiceUnavailableError('the server is shutting down; send the request again, to another instance or to this one once it is back', DRAINING_RETRY_AFTER_S));
  });
  app.addHook('onSend', (request, reply, payload, done) => {
    if (draining) {
      const raw = request.raw;
      if ((numberOf.get(raw) ?? 0) < (latest.get(raw.socket) ?? 0)) {
        reply.removeHeader('connection');
        reply.raw.removeHeader('connection');
      } else {
        reply.header('connection', 'close');
      }
    }
    done(null, payload);
  });
  app.addHook('onResponse', (_request, _reply, done) => {
    // The answers that were queued behind went out with keep-alive: nothing more comes.
    if (draining) app.server.closeIdleConnections();
    done();
  });
}
