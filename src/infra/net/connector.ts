/**
 * The one kit for talking over THE dialer's sockets (as undici's one `buildConnector` serves
 * every client of it): connect to the first checked address that accepts, start TLS on a socket
 * or on a tunnel, and have node:http frame one request on a socket already held. The HTTP and
 * TLS checks and the proxy checks get it as the domain's Connector (src/domain/connector.ts,
 * built here by createConnector and handed in by src/compose.ts); webhook deliveries
 * (../webhooks/sender.ts) and RDAP lookups (../rdap/fetch.ts) use `openDialed` and `send`.
 *
 * Nothing here resolves a name or opens a socket by itself: every connection is the dialer's,
 * to an address its target policy checked, within its socket budget. node:http only frames a
 * request on the socket it is given (`createConnection`); it never resolves, connects, pools or
 * follows a redirect.
 */
import http from 'node:http';
import net from 'node:net';
import { performance } from 'node:perf_hooks';
import type { Duplex } from 'node:stream';
import tls from 'node:tls';
import { DialError } from '../../errors.js';
import { unlessAborted } from '../../lib/deadline.js';
import { hostOf, portOf } from '../../lib/url.js';
import type { ConnectFirstOptions, Connected, Connector, HttpAnswer, HttpRequestSpec, SendOptions, StartTlsOptions, TlsStarted } from '../../domain/connector.js';
import type { CheckedAddress, Dialer } from '../../domain/dialer.js';

function ignore(): void {}

/** The first checked address that accepts, in the dialer's order; see Connector.connect. */
export async function connectFirst(
  dialer: Pick<Dialer, 'dial'>,
  addresses: readonly CheckedAddress[],
  port: number,
  opts: ConnectFirstOptions,
): Promise<Connected> {
  let last: unknown = new DialError('EDIAL', addresses[0] ?? '', port, 0);
  let queuedMs = 0;
  const tried = opts.maxAddresses === undefined ? addresses : addresses.slice(0, opts.maxAddresses);
  for (const address of tried) {
    const timeoutMs = opts.deadline === undefined ? opts.timeoutMs : Math.max(1, opts.deadline - performance.now());
    try {
      const r = await dialer.dial(address, port, {
        timeoutMs,
        signal: opts.signal,
        ...(opts.budget ? { budget: opts.budget } : {}),
        ...(opts.owner ? { owner: opts.owner } : {}),
      });
      r.socket.on('error', ignore);
      // A request and a handshake are small writes that wait on no ACK: as curl, no Nagle.
      if (opts.noDelay) r.socket.setNoDelay(true);
      return { socket: r.socket, address, queuedMs: queuedMs + r.queuedMs };
    } catch (err) {
      if (!(err instanceof DialError) || err.code === 'ABORT_ERR') throw err;
      queuedMs += err.queuedMs;
      last = err;
    }
  }
  throw last;
}

/**
 * One TLS context for the handshakes that name no trust of their own: building one per
 * connection (what tls.connect does when given none) loads the CA store each time, the largest
 * cost of a bulk proxy check. Built at the first such handshake.
 */
let sharedContext: tls.SecureContext | null = null;
const defaultContext = (): tls.SecureContext => (sharedContext ??= tls.createSecureContext());

/** TLS over `raw`, a socket or a tunnel; see Connector.startTls. */
export function startTls(raw: Duplex, opts: StartTlsOptions): Promise<TlsStarted> {
  return new Promise((resolve, reject) => {
    const context = opts.context ?? (opts.ca === undefined ? defaultContext() : undefined);
    const secure = tls.connect({
      socket: raw,
      // Without `host` node checks the certificate against the SNI, else "localhost".
      ...(opts.host !== undefined ? { host: opts.host } : {}),
      ...(opts.servername !== undefined && opts.servername !== null ? { servername: opts.servername } : {}),
      ...(context !== undefined ? { secureContext: context } : {}),
      ...(opts.ca !== undefined ? { ca: opts.ca } : {}),
      rejectUnauthorized: opts.verify,
      ALPNProtocols: [...opts.alpn],
    });
    const cleanup = (): void => {
      opts.signal.removeEventListener('abort', onAbort);
      secure.off('secureConnect', onSecure);
      secure.off('error', onError);
      secure.on('error', ignore);
    };
    const onAbort = (): void => {
      cleanup();
      secure.destroy();
      raw.destroy();
      reject(opts.aborted ? opts.aborted() : opts.signal.reason);
    };
    const onError = (err: Error): void => {
      cleanup();
      secure.destroy();
      raw.destroy();
      reject(err);
    };
    const onSecure = (): void => {
      const at = performance.now();
      cleanup();
      resolve({ socket: secure, at });
    };
    if (opts.signal.aborted) return onAbort();
    opts.signal.addEventListener('abort', onAbort, { once: true });
    secure.once('secureConnect', onSecure);
    secure.once('error', onError);
  });
}

/** One request on `socket`, resolved at the answer's head; see Connector.send. */
export function send(socket: Duplex, spec: HttpRequestSpec, opts: SendOptions): Promise<HttpAnswer> {
  return new Promise((resolve, reject) => {
    const { signal } = opts;
    const aborted = (): unknown => (opts.aborted ? opts.aborted() : signal.reason);
    const request = http.request({
      method: spec.method,
      path: spec.path,
      // The one socket given; with no agent, node:http neither resolves nor pools.
      createConnection: () => socket as net.Socket,
      setHost: false,
      ...(spec.maxHeaderSize !== undefined ? { maxHeaderSize: spec.maxHeaderSize } : {}),
      headers: spec.headers,
    });
    // Before node:http's own listener: the moment the first byte of the answer arrives.
    if (opts.onFirstByte) socket.prependOnceListener('data', opts.onFirstByte);
    let settled = false;
    let sentAt = 0;
    const settle = (): boolean => {
      if (settled) return false;
      settled = true;
      signal.removeEventListener('abort', onAbort);
      return true;
    };
    const onAbort = (): void => {
      if (!settle()) return;
      request.destroy();
      reject(aborted());
    };
    // Kept for the request's life: the socket's later errors reach the request too.
    request.on('error', (err) => {
      if (settle()) reject(signal.aborted ? aborted() : err);
    });
    const answered = (res: http.IncomingMessage, tunnel: HttpAnswer['tunnel']): void => {
      const at = performance.now();
      if (!settle()) return;
      res.on('error', ignore);
      resolve({ res, request, sentAt, at, tunnel });
    };
    if (spec.method === 'CONNECT') request.once('connect', (res: http.IncomingMessage, tunnel: Duplex, head: Buffer) => answered(res, { socket: tunnel, head }));
    else request.once('response', (res) => answered(res, null));
    if (signal.aborted) return onAbort();
    signal.addEventListener('abort', onAbort, { once: true });
    sentAt = performance.now();
    request.end(spec.body);
  });
}

/** The kit as the domain sees it, over `dialer`. */
export function createConnector(dialer: Pick<Dialer, 'dial'>): Connector {
  return {
    connect: (addresses, port, opts) => connectFirst(dialer, addresses, port, opts),
    startTls,
    send,
  };
}

export interface DialedConnectOptions {
  /** Each address's connect timeout. */
  timeoutMs: number;
  signal: AbortSignal;
  owner?: string | undefined;
  /** What an abort rejects with (the caller's own error class). */
  aborted: () => Error;
}

/**
 * Resolve `url`'s host (every address checked by the target policy), connect to a checked
 * address (pinned: a name that re-resolves elsewhere cannot redirect it), and for https start
 * TLS with the certificate verified against the URL's name, or its IP literal: without a `host`
 * node:tls checks against "localhost", so a certificate for DNS:localhost passed for
 * https://127.0.0.2/. An IP is never sent as SNI (RFC 6066 3). The socket a request on `url` is
 * sent on (`urlRequest`). Throws TargetForbiddenError, ResolveError, DialError, a TLS error or
 * `aborted()`.
 */
export async function openDialed(
  dialer: Pick<Dialer, 'resolve' | 'dial'>,
  url: URL,
  opts: DialedConnectOptions & { field: string; ca?: string | Buffer | undefined },
): Promise<net.Socket> {
  const host = hostOf(url);
  // The resolver takes no signal: an abort must not wait for a slow DNS answer.
  const target = await unlessAborted(dialer.resolve(host, { field: opts.field }), opts.signal, opts.aborted);
  let socket: net.Socket;
  try {
    ({ socket } = await connectFirst(dialer, target.addresses, portOf(url), { timeoutMs: opts.timeoutMs, signal: opts.signal, owner: opts.owner }));
  } catch (err) {
    if (err instanceof DialError && err.code === 'ABORT_ERR') throw opts.aborted();
    throw err;
  }
  if (url.protocol !== 'https:') return socket;
  const name = target.hostname ?? host;
  try {
    const started = await startTls(socket, {
      host: name,
      servername: net.isIP(name) === 0 ? name : null,
      ...(opts.ca !== undefined ? { ca: opts.ca } : {}),
      verify: true,
      alpn: ['http/1.1'],
      signal: opts.signal,
      aborted: opts.aborted,
    });
    return started.socket;
  } catch (err) {
    socket.destroy();
    throw err;
  }
}

/** A request on `url`'s socket from openDialed: origin-form, its Host, and Connection: close before the caller's headers. */
export function urlRequest(url: URL, method: string, headers: http.OutgoingHttpHeaders, body?: Buffer): HttpRequestSpec {
  return {
    method,
    path: `${url.pathname}${url.search}`,
    headers: { host: url.host, connection: 'close', ...headers },
    ...(body !== undefined ? { body } : {}),
  };
}
