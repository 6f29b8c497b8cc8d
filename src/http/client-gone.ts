import type { FastifyReply } from 'fastify';
import { ClientGoneError } from '../errors.js';

/** HTTP status recorded (never sent) for a request whose client went away. */
export const CLIENT_GONE_STATUS = 499;

/** A signal that aborts, with a ClientGoneError, when the client goes away before its answer is sent. */
export function clientGoneSignal(reply: FastifyReply): AbortSignal {
  const ac = new AbortController();
  const res = reply.raw;
  // 'close' also comes after a normal answer; only an unfinished response means the client left.
  res.once('close', () => {
    if (!res.writableFinished) ac.abort(new ClientGoneError());
  });
  return ac.signal;
}
