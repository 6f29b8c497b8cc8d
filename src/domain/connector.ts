import type http from 'node:http';
import type net from 'node:net';
import type { Duplex } from 'node:stream';
import type tls from 'node:tls';
import type { CheckedAddress } from './dialer.js';
import type { SocketBudget } from './socket-budget.js';

/**
 * What the domain needs to talk over the dialer's sockets (the HTTP and TLS checks, the proxy
 * checks): connect to the first checked address that accepts, start TLS on a socket or a tunnel,
 * and have node:http frame one request on a socket already held. The infra layer's net connector
 * implements it over THE dialer, so every connection it makes passes the target policy and
 * draws from the one socket budget (./dialer.ts); webhook deliveries and RDAP lookups use the
 * same functions there. src/compose.ts hands it in.
 */

/** Each address's connect timeout: a fixed one, or what is left until `deadline` (a performance.now() time), at least 1 ms. */
export type ConnectTime = { timeoutMs: number; deadline?: undefined } | { deadline: number; timeoutMs?: undefined };

export type ConnectFirstOptions = ConnectTime & {
  /** Aborts a queued or in-progress connect: DialError('ABORT_ERR'). */
  signal: AbortSignal;
  budget?: SocketBudget;
  /** Whose dial this is (an account key); default: currentOwner(). */
  owner?: string;
  /** Addresses tried at most; default every one. */
  maxAddresses?: number;
  /** Turn Nagle off on the connected socket. */
  noDelay?: boolean;
};

/** A connected socket from the dialer (with an 'error' listener attached) and which address took it. */
export interface Connected {
  socket: net.Socket;
  address: CheckedAddress;
  /** Time spent waiting for a socket slot (not connecting), ms, summed over the addresses tried. */
  queuedMs: number;
}

export interface StartTlsOptions {
  /** The name node:tls checks the certificate against (its `host`); left out, node's own default. */
  host?: string;
  /** SNI; none when null or left out. */
  servername?: string | null;
  context?: tls.SecureContext;
  /** CA certificates instead of node's roots (a context of its own per connection). */
  ca?: string | Buffer;
  /** Refuse a certificate that does not verify (node's rejectUnauthorized). */
  verify: boolean;
  alpn: readonly string[];
  signal: AbortSignal;
  /** What an abort rejects with; default the signal's reason. */
  aborted?: () => unknown;
}

export interface TlsStarted {
  socket: tls.TLSSocket;
  /** performance.now() when the handshake completed. */
  at: number;
}

/** One request, framed by node:http exactly as given (no Host is added). */
export interface HttpRequestSpec {
  method: string;
  /** Origin-form, absolute-form (through an HTTP proxy) or, for CONNECT, the authority. */
  path: string;
  headers: http.OutgoingHttpHeaders;
  body?: Buffer;
  /** llhttp's bound on the answer's head (HPE_HEADER_OVERFLOW past it); default node's. */
  maxHeaderSize?: number;
}

export interface SendOptions {
  signal: AbortSignal;
  /** What an abort rejects with; default the signal's reason. */
  aborted?: () => unknown;
  /** Called when the first byte of the answer arrives on the socket. */
  onFirstByte?: () => void;
}

/** The answer's head: its body is the caller's to read, bound and close. */
export interface HttpAnswer {
  res: http.IncomingMessage;
  /** Still emits the socket's later errors; one listener that ignores them is attached. */
  request: http.ClientRequest;
  /** performance.now() just before the request was sent, and when its answer's head was in. */
  sentAt: number;
  at: number;
  /** For CONNECT: the socket past the answer's head and what was read past it; null otherwise. */
  tunnel: { socket: Duplex; head: Buffer } | null;
}

export interface Connector {
  /**
   * The first of the checked addresses (in the dialer's order) that accepts, each tried in turn.
   * Rejects with the last DialError, at once with one whose code is ABORT_ERR, or with a bug.
   */
  connect(addresses: readonly CheckedAddress[], port: number, opts: ConnectFirstOptions): Promise<Connected>;
  /**
   * TLS over `socket`. Rejects with the TLS error or `aborted()`, and then both sockets are
   * destroyed; on success one listener that ignores later errors is left on the TLS socket.
   */
  startTls(socket: Duplex, opts: StartTlsOptions): Promise<TlsStarted>;
  /**
   * Sends one request on `socket` (node:http neither resolves, connects nor pools: the socket
   * is the one given); resolves once the answer's head is in. Rejects with node's error (an
   * errno or llhttp's HPE_* code) or `aborted()`.
   */
  send(socket: Duplex, request: HttpRequestSpec, opts: SendOptions): Promise<HttpAnswer>;
}
