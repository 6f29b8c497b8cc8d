import type { FastifyReply } from 'fastify';

/**
 * The client closed its connection before its answer was sent. Work done for it after that is
 * waste: a 1000-port scan at a 30 s timeout would hold its share of the socket budget for a
 * minute for nobody. Nobody reads the reply either; it is logged and recorded with status 499
 * (nginx's "client closed request"), never sent.
 */
export class ClientGoneError extends Error {
  constructor() {
    super('the client closed the connection before the answer was ready; its work was cancelled');
    this.name = 'ClientGoneError';
  }
}

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
