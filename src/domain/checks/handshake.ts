import net from 'node:net';
import tls from 'node:tls';
import type { Connector } from '../connector.js';

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
 * TLS over the dialer's socket (the connector's). Verification is not enforced (verify false) so
 * that an expired or misnamed certificate can be described; `authorized` says what a verifying
 * client would decide. Rejects with the TLS error (handshake failure) or the signal's reason.
 */
export async function handshake(connector: Pick<Connector, 'startTls'>, raw: net.Socket, opts: HandshakeOptions): Promise<Handshake> {
  const { socket: secure, at } = await connector.startTls(raw, {
    // Node checks the certificate against `host` (default "localhost"): the name asked about.
    host: opts.name,
    servername: opts.servername,
    context: opts.context,
    verify: false,
    alpn: opts.alpn,
    signal: opts.signal,
  });
  const cert = secure.getPeerCertificate();
  const hostnameMatch = cert !== null && Object.keys(cert).length > 0 && namesHost(opts.name, cert);
  // Node sets authorizationError for the chain, else for the name (checkServerIdentity).
  const chainError = secure.authorizationError ? String(secure.authorizationError) : null;
  const authorizationError = chainError ?? (hostnameMatch ? null : 'ERR_TLS_CERT_ALTNAME_INVALID');
  return { secure, authorized: authorizationError === null, authorizationError, hostnameMatch, at };
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
