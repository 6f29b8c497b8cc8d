import type { IncomingMessage } from 'node:http';
import type { Socket } from 'node:net';
import type { FastifyInstance } from 'fastify';

/**
 * How much of a refused body is still read (and thrown away) after its answer, so the client
 * finishes sending and reads the answer: 8 times the body limit covers every client that merely
 * sent too much; one that sends more is not going to stop.
 */
export const LINGER_MAX_BYTES = 8 * 1024 * 1024;
/**
 * How long a refused body is still read after its answer: a client that reads while it sends
 * (curl, browsers, undici) stops at once; one that sends first and reads afterwards needs the
 * time its upload takes (1 MiB over a 1 Mbit/s uplink: about 9 s).
 */
export const LINGER_MAX_MS = 10_000;

const lingering = Symbol('netdiag.lingeringClose');
type LingeringSocket = Socket & { [lingering]?: IncomingMessage };

/**
 * An answer sent before the request's body was read (413, 415, 401, a 503 while shutting down)
 * closes its connection: Node then closes the socket as soon as the answer is written, while the
 * client is still sending. Closing a socket with unread bytes makes the kernel send a reset, and
 * a client that had not read the answer yet sees a broken pipe instead of it (the tester's "4 of
 * 8 uploads of 1.1 MB"). Such a connection is closed the way HTTP servers have long done it (a
 * "lingering close"): the answer goes out and our side is shut, then whatever the client still
 * sends is read and discarded until it has sent its whole request, it closes, or
 * LINGER_MAX_BYTES or LINGER_MAX_MS is reached, and only then is the socket destroyed.
 */
export function registerLingeringClose(app: FastifyInstance): void {
  app.addHook('onSend', (request, _reply, payload, done) => {
    const raw = request.raw;
    const socket = raw.socket as LingeringSocket | null;
    if (!raw.complete && socket && !socket.destroyed) {
      // Node calls destroySoon when an answer that closes its connection has been handed to the
      // socket; an answer that keeps the connection leaves this unused (Node reads the rest of
      // the body itself then).
      socket[lingering] = raw;
      if (!Object.hasOwn(socket, 'destroySoon')) socket.destroySoon = lingeringDestroySoon;
    }
    done(null, payload);
  });
}

function lingeringDestroySoon(this: LingeringSocket): void {
  const request = this[lingering];
  if (!request || request.complete) {
    // Nothing left unread: Node's own close (end, then destroy once written).
    Object.getPrototypeOf(this).destroySoon.call(this);
    return;
  }
  lingerThenClose(this, request);
}

/** Shuts our side of `socket` (the answer is already queued), reads until the bounds, then destroys it. */
function lingerThenClose(socket: Socket, request: IncomingMessage): void {
  const readAtStart = socket.bytesRead;
  const timer = setTimeout(() => socket.destroy(), LINGER_MAX_MS);
  timer.unref();
  socket.once('close', () => clearTimeout(timer));
  // Destroyed before the answer is written out, the answer would be lost with it.
  let closing = false;
  const closeOnceWritten = (): void => {
    if (closing) return;
    closing = true;
    if (socket.writableFinished) socket.destroy();
    else socket.once('finish', () => socket.destroy());
  };
  const onData = (): void => {
    if (request.complete || socket.bytesRead - readAtStart > LINGER_MAX_BYTES) closeOnceWritten();
  };
  socket.end();
  // Node's parser reads the rest of the request (its body is discarded: nobody listens to it).
  // This listener runs after it; adding it takes the socket's bytes off Node's fast path into
  // 'data' events, so it waits for the socket to be resumed first (Node resumes it for the
  // discarded body in a later tick, through a listener that taking the fast path off removes).
  setImmediate(() => {
    if (socket.destroyed) return;
    socket.on('data', onData);
    socket.resume();
    onData();
  });
}
