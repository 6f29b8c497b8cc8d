/**
 * HTTP(S) on sockets from THE dialer, shared by webhook deliveries (infra/webhooks/sender.ts) and
 * RDAP lookups (infra/rdap/fetch.ts): the URL's host is resolved and every address checked by the
 * target policy (dialer.resolve), the connection goes to a checked address (pinned: a name that
 * re-resolves elsewhere cannot redirect it), TLS runs over that socket with the certificate checked
 * against the URL's host, and node:http only frames requests on it (`createConnection`): it never
 * resolves, connects, pools or follows a redirect by itself.
 */
import http from 'node:http';
import net from 'node:net';
import tls from 'node:tls';
import { DialError } from '../../errors.js';
import { unlessAborted } from '../../lib/deadline.js';
import { hostOf, portOf } from '../../lib/url.js';
import type { CheckedAddress } from '../../domain/dialer.js';
import type { Dialer } from './dialer.js';

export interface DialedConnectOptions {
  timeoutMs: number;
  signal: AbortSignal;
  owner?: string | undefined;
  /** What an abort rejects with (the caller's own error class). */
  aborted: () => Error;
}

/** The first checked address that accepts, in the dialer's order (IPv4 first); an error listener is attached. */
async function connectFirst(dialer: Dialer, addresses: readonly CheckedAddress[], port: number, opts: DialedConnectOptions): Promise<net.Socket> {
  let last: unknown = new Error('no address');
  for (const address of addresses) {
    try {
      const socket = await dialer.connect(address, port, { timeoutMs: opts.timeoutMs, signal: opts.signal, ...(opts.owner ? { owner: opts.owner } : {}) });
      socket.on('error', () => undefined);
      return socket;
    } catch (err) {
      if (err instanceof DialError && err.code === 'ABORT_ERR') throw opts.aborted();
      last = err;
    }
  }
  throw last;
}

/**
 * TLS over the dialer's socket, the certificate verified against `host`: the URL's name, or its
 * IP literal. Without `host` node:tls checks the certificate against "localhost", so a
 * certificate for DNS:localhost passed for https://127.0.0.2/. An IP is never sent as SNI
 * (RFC 6066 3): the certificate must name the address itself.
 */
function startTls(raw: net.Socket, host: string, opts: { signal: AbortSignal; aborted: () => Error; ca?: string | Buffer | undefined }): Promise<net.Socket> {
  return new Promise((resolve, reject) => {
    const secure = tls.connect({
      socket: raw,
      host,
      ...(net.isIP(host) === 0 ? { servername: host } : {}),
      ALPNProtocols: ['http/1.1'],
      ...(opts.ca !== undefined ? { ca: opts.ca } : {}),
    });
    const onAbort = (): void => {
      secure.destroy();
      reject(opts.aborted());
    };
    opts.signal.addEventListener('abort', onAbort, { once: true });
    secure.once('secureConnect', () => {
      opts.signal.removeEventListener('abort', onAbort);
      secure.removeAllListeners('error');
      secure.on('error', () => undefined);
      resolve(secure);
    });
    secure.once('error', (err) => {
      opts.signal.removeEventListener('abort', onAbort);
      secure.on('error', () => undefined);
      secure.destroy();
      raw.destroy();
      reject(err);
    });
  });
}

/**
 * Resolve (policy-checked), connect to a checked address, and TLS for https: the socket an
 * http.request on `url` is framed on. Throws TargetForbiddenError, ResolveError, DialError or
 * `aborted()`.
 */
export async function openDialed(dialer: Dialer, url: URL, opts: DialedConnectOptions & { field: string; ca?: string | Buffer | undefined }): Promise<net.Socket> {
  const host = hostOf(url);
  // The resolver takes no signal: an abort must not wait for a slow DNS answer.
  const target = await unlessAborted(dialer.resolve(host, { field: opts.field }), opts.signal, opts.aborted);
  let socket = await connectFirst(dialer, target.addresses, portOf(url), opts);
  if (url.protocol === 'https:') {
    try {
      socket = await startTls(socket, target.hostname ?? host, { signal: opts.signal, aborted: opts.aborted, ca: opts.ca });
    } catch (err) {
      socket.destroy();
      throw err;
    }
  }
  return socket;
}

/** A request framed by node:http on the one socket given; with no agent node:http neither resolves nor pools. */
export function requestOn(socket: net.Socket, url: URL, opts: { method: string; headers: http.OutgoingHttpHeaders }): http.ClientRequest {
  return http.request({
    method: opts.method,
    path: `${url.pathname}${url.search}`,
    createConnection: () => socket,
    setHost: false,
    headers: { host: url.host, connection: 'close', ...opts.headers },
  });
}
