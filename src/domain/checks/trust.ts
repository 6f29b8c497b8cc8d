import tls from 'node:tls';

/**
 * What the checks trust: Node's bundled roots plus the PEM text of NETDIAG_EXTRA_CA_CERTS. Built
 * once (building a context loads the CA store, the dearest part of a handshake) and shared.
 */
export function trustContext(extraCaPem?: string): tls.SecureContext {
  return tls.createSecureContext({ ca: extraCaPem === undefined ? [...tls.rootCertificates] : [...tls.rootCertificates, extraCaPem] });
}
