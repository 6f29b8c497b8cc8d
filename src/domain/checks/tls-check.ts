import { performance } from 'node:perf_hooks';
import type tls from 'node:tls';
import type { Connector } from '../connector.js';
import type { Dialer } from '../dialer.js';
import { DialError, ResolveError } from '../../errors.js';
import { unlessAborted } from '../../lib/deadline.js';
import { chainOf, describeCertificate, type CertificateInfo, type ChainEntry } from './certificate.js';
import { handshake, handshakeFailure, sniFor } from './handshake.js';
import { CHECK_DEFAULT_TIMEOUT_S, CHECK_MAX_ADDRESSES, TLS_ALPN_OFFER, TLS_DEFAULT_PORT } from './defaults.js';

export interface TlsCheckInput {
  host: string;
  port?: number | undefined;
  /** SNI and the name the certificate is checked against; default the host. */
  servername?: string | undefined;
  /** Seconds for the whole check. */
  timeout?: number | undefined;
}

export interface TlsCheckResult {
  host: string;
  port: number;
  /** The address connected to, or null. */
  ip: string | null;
  /** The SNI sent (null: none, the host is an address). */
  servername: string | null;
  protocol: string | null;
  cipher: string | null;
  alpn: string | null;
  authorized: boolean;
  authorization_error: string | null;
  hostname_match: boolean;
  certificate: CertificateInfo | null;
  chain: ChainEntry[];
  /** Why there is no handshake to describe; null when there is one (a bad certificate is not an error). */
  error: string | null;
}

export interface TlsCheckDeps {
  dialer: Pick<Dialer, 'resolve'>;
  connector: Connector;
  /** Node's roots plus NETDIAG_EXTRA_CA_CERTS (trust.ts). */
  context: tls.SecureContext;
  now?: () => number;
}

/**
 * Connects through the dialer to the checked address of `host` and shakes hands with the
 * requested SNI, then describes what the server showed. A certificate that is expired, misnamed,
 * self-signed or missing its chain is reported (authorized false, why, hostname_match); a name
 * that does not resolve, a refused port, a handshake that fails or the deadline is a result with
 * `error`. TargetForbiddenError and ValidationError are thrown; the caller's abort rethrown.
 */
export async function checkTls(deps: TlsCheckDeps, input: TlsCheckInput, signal: AbortSignal): Promise<TlsCheckResult> {
  const port = input.port ?? TLS_DEFAULT_PORT;
  const timeoutS = input.timeout ?? CHECK_DEFAULT_TIMEOUT_S;
  const deadline = performance.now() + timeoutS * 1000;
  const expired = AbortSignal.timeout(timeoutS * 1000);
  const both = AbortSignal.any([signal, expired]);
  const result: TlsCheckResult = {
    host: input.host.trim(),
    port,
    ip: null,
    servername: null,
    protocol: null,
    cipher: null,
    alpn: null,
    authorized: false,
    authorization_error: null,
    hostname_match: false,
    certificate: null,
    chain: [],
    error: null,
  };
  let secure: tls.TLSSocket | undefined;
  let raw: import('node:net').Socket | undefined;
  try {
    let resolved;
    try {
      // The resolver takes no signal: the deadline (or the caller's abort) must not wait for a slow DNS answer.
      resolved = await unlessAborted(deps.dialer.resolve(input.host, { field: 'host' }), both);
    } catch (err) {
      if (err instanceof ResolveError) return { ...result, error: err.message };
      throw err;
    }
    const name = input.servername ?? resolved.hostname ?? resolved.addresses[0]!;
    result.servername = sniFor(name);
    const connected = await deps.connector.connect(resolved.addresses, port, { deadline, signal: both, maxAddresses: CHECK_MAX_ADDRESSES, noDelay: true });
    raw = connected.socket;
    result.ip = connected.address;
    const shake = await handshake(deps.connector, raw, { name, servername: result.servername, context: deps.context, alpn: TLS_ALPN_OFFER, signal: both });
    secure = shake.secure;
    result.protocol = secure.getProtocol();
    result.cipher = secure.getCipher()?.name ?? null;
    result.alpn = secure.alpnProtocol || null;
    result.authorized = shake.authorized;
    result.authorization_error = shake.authorizationError;
    result.hostname_match = shake.hostnameMatch;
    const peer = secure.getPeerCertificate(true);
    if (peer?.raw) {
      result.certificate = describeCertificate(peer.raw, (deps.now ?? Date.now)(), peer.bits);
      result.chain = chainOf(peer);
    }
    return result;
  } catch (err) {
    signal.throwIfAborted();
    if (expired.aborted) return { ...result, error: `no TLS handshake within ${timeoutS} s` };
    if (err instanceof DialError) return { ...result, error: err.message };
    if (err instanceof Error && result.ip !== null) return { ...result, error: handshakeFailure(err) };
    throw err;
  } finally {
    secure?.destroy();
    raw?.destroy();
  }
}
