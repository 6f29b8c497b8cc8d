import net from 'node:net';
import { performance } from 'node:perf_hooks';
import tls from 'node:tls';
import type { CheckedAddress, Dialer } from '../dialer.js';
import { DialError } from '../../errors.js';
import { CHECK_MAX_ADDRESSES } from './defaults.js';

/** A connected socket from the dialer and which address took it. */
export interface Connected {
  socket: net.Socket;
  address: CheckedAddress;
  /** Time spent waiting for a socket slot (not connecting), ms: left out of the timings. */
  queuedMs: number;
}

/**
 * The first of the checked addresses (the dialer's order: IPv4 first) that accepts, each tried
 * in turn with what is left of the deadline. Rejects with the last DialError (ABORT_ERR when the
 * signal fired).
 */
export async function connectFirst(
  dialer: Pick<Dialer, 'dial'>,
  addresses: readonly CheckedAddress[],
  port: number,
  deadline: number,
  signal: AbortSignal,
): Promise<Connected> {
  let last: unknown = new DialError('EDIAL', addresses[0] ?? '', port, 0);
  let queuedMs = 0;
  for (const address of addresses.slice(0, CHECK_MAX_ADDRESSES)) {
    const timeoutMs = Math.max(1, deadline - performance.now());
    try {
      const r = await dialer.dial(address, port, { timeoutMs, signal });
      r.socket.on('error', () => undefined);
      // A request and a handshake are small writes that wait on no ACK: as curl, no Nagle.
      r.socket.setNoDelay(true);
      return { socket: r.socket, address, queuedMs: queuedMs + r.queuedMs };
    } catch (err) {
      if (!(err instanceof DialError) || err.code === 'ABORT_ERR') throw err;
      queuedMs += err.queuedMs;
      last = err;
    }
  }
  throw last;
}

export interface HandshakeOptions {
  /** The name the certificate is checked against (a host name or an IP address). */
  name: string;
  /** SNI; null for none (an IP address is never sent as SNI, RFC 6066 3). */
  servername: string | null;
  context: tls.SecureContext;
  alpn: readonly string[];
  signal: AbortSignal;
}

/** What a handshake said about the peer; the certificate is judged, never refused. */
export interface Handshake {
  secure: tls.TLSSocket;
  /** The chain verified against the trust store AND the certificate names `name`. */
  authorized: boolean;
  /** Why not: OpenSSL's code for the chain (CERT_HAS_EXPIRED, ...) or ERR_TLS_CERT_ALTNAME_INVALID. */
  authorizationError: string | null;
  hostnameMatch: boolean;
  /** performance.now() when the handshake completed. */
  at: number;
}

/** Whether `cert` names `name` (RFC 6125, as Node's checkServerIdentity decides). */
export function namesHost(name: string, cert: tls.PeerCertificate): boolean {
  return tls.checkServerIdentity(name, cert) === undefined;
}

/**
 * TLS over the dialer's socket. Verification is not enforced here (rejectUnauthorized false) so
 * that an expired or misnamed certificate can be described; `authorized` says what a verifying
 * client would decide. Rejects with the TLS error (handshake failure) or the signal's reason.
 */
export function handshake(raw: net.Socket, opts: HandshakeOptions): Promise<Handshake> {
  return new Promise((resolve, reject) => {
    const secure = tls.connect({
      socket: raw,
      // Node checks the certificate against `host` (default "localhost"): the name asked about.
      host: opts.name,
      ...(opts.servername !== null ? { servername: opts.servername } : {}),
      secureContext: opts.context,
      rejectUnauthorized: false,
      ALPNProtocols: [...opts.alpn],
    });
    const cleanup = (): void => {
      opts.signal.removeEventListener('abort', onAbort);
      secure.off('secureConnect', onSecure);
      secure.off('error', onError);
      secure.on('error', () => undefined);
    };
    const onAbort = (): void => {
      cleanup();
      secure.destroy();
      raw.destroy();
      reject(opts.signal.reason);
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
      const cert = secure.getPeerCertificate();
      const hostnameMatch = cert !== null && Object.keys(cert).length > 0 && namesHost(opts.name, cert);
      // Node sets authorizationError for the chain, else for the name (checkServerIdentity).
      const chainError = secure.authorizationError ? String(secure.authorizationError) : null;
      const authorizationError = chainError ?? (hostnameMatch ? null : 'ERR_TLS_CERT_ALTNAME_INVALID');
      resolve({ secure, authorized: authorizationError === null, authorizationError, hostnameMatch, at });
    };
    if (opts.signal.aborted) return onAbort();
    opts.signal.addEventListener('abort', onAbort, { once: true });
    secure.once('secureConnect', onSecure);
    secure.once('error', onError);
  });
}

/** The SNI to send for a name: none for an IP address. */
export function sniFor(name: string): string | null {
  return net.isIP(name) === 0 ? name : null;
}

/** A failed handshake in a few words: OpenSSL's reason ("wrong version number"), else Node's message, one line. */
export function handshakeFailure(err: unknown): string {
  const e = err as { reason?: unknown; code?: unknown; message?: unknown } | null;
  if (typeof e?.reason === 'string' && e.reason !== '') return `TLS handshake failed: ${e.reason}`;
  if (e?.code === 'ECONNRESET') return 'TLS handshake failed: the server closed the connection';
  const text = typeof e?.message === 'string' ? e.message.split('\n')[0]!.slice(0, 200) : String(err);
  return `TLS handshake failed: ${text}`;
}
