/**
 * RDAP's HTTP(S) GET over THE dialer, by the mechanism webhook deliveries use (../net/connector.ts):
 * the URL's host resolved and checked by the target policy, the connection pinned to a checked
 * address, node:http framing one request on it. No redirect is followed here (the domain follows
 * them, each through this again) and the body is read no further than `maxBytes`.
 */
import type net from 'node:net';
import { RdapAbortedError } from '../../errors.js';
import type { RdapHttp, RdapHttpResponse } from '../../domain/rdap/types.js';
import type { Dialer } from '../net/dialer.js';
import { openDialed, send, urlRequest } from '../net/connector.js';

export const RDAP_USER_AGENT = 'netdiag-rdap/1';

export interface DialerRdapHttpOptions {
  /** Extra CA certificates trusted for https servers (tests: a loopback fixture's). */
  ca?: string | Buffer;
}

export class DialerRdapHttp implements RdapHttp {
  readonly #dialer: Dialer;
  readonly #ca: string | Buffer | undefined;

  constructor(dialer: Dialer, opts: DialerRdapHttpOptions = {}) {
    this.#dialer = dialer;
    this.#ca = opts.ca;
  }

  async get(url: URL, opts: { timeoutMs: number; maxBytes: number; signal: AbortSignal; accept: string }): Promise<RdapHttpResponse> {
    const aborted = (): Error => new RdapAbortedError(url.href);
    const socket = await openDialed(this.#dialer, url, { field: 'rdap_server', timeoutMs: opts.timeoutMs, signal: opts.signal, aborted, ca: this.#ca });
    try {
      return await this.#read(socket, url, opts, aborted);
    } finally {
      socket.destroy();
    }
  }

  async #read(socket: net.Socket, url: URL, opts: { maxBytes: number; signal: AbortSignal; accept: string }, aborted: () => Error): Promise<RdapHttpResponse> {
    const { res, request } = await send(socket, urlRequest(url, 'GET', { accept: opts.accept, 'user-agent': RDAP_USER_AGENT }), { signal: opts.signal, aborted });
    return new Promise((resolve, reject) => {
      let settled = false;
      const settle = (fn: () => void): void => {
        if (settled) return;
        settled = true;
        opts.signal.removeEventListener('abort', onAbort);
        fn();
      };
      // An abort, or a reset, while the body comes ends the lookup as one before the head does.
      const onAbort = (): void => settle(() => {
        request.destroy();
        reject(aborted());
      });
      if (opts.signal.aborted) {
        onAbort();
        return;
      }
      opts.signal.addEventListener('abort', onAbort, { once: true });
      request.on('error', (err) => settle(() => reject(err)));
      const status = res.statusCode ?? 0;
      const location = typeof res.headers.location === 'string' ? res.headers.location : null;
      const chunks: Buffer[] = [];
      let bytes = 0;
      const finish = (truncated: boolean): void =>
        settle(() => {
          res.removeAllListeners('data');
          res.on('error', () => undefined);
          // Whatever the server sends after this is never read.
          socket.destroy();
          resolve({ status, location, body: Buffer.concat(chunks), bytes, truncated });
        });
      res.on('data', (chunk: Buffer) => {
        const room = opts.maxBytes - bytes;
        if (chunk.length > room) {
          chunks.push(chunk.subarray(0, room));
          bytes += room;
          finish(true);
          return;
        }
        chunks.push(chunk);
        bytes += chunk.length;
        // One chunk per turn of the event loop: a peer that floods would otherwise have Node read
        // chunk after chunk (up to the 1 MiB cap) in one turn, while every other request waits.
        res.pause();
        setImmediate(() => res.resume());
      });
      res.once('end', () => finish(false));
      res.once('error', (err) => settle(() => reject(err)));
      // A redirect's body is nobody's business: its status and Location are the answer.
      if (status >= 300 && status < 400 && location !== null) finish(false);
    });
  }
}
