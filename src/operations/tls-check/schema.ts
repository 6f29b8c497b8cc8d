import { Type } from 'typebox';
import { TLS_DEFAULT_PORT } from '../../domain/checks/defaults.js';
import type { TlsCheckResult as DomainTlsCheckResult } from '../../domain/checks/index.js';
import { DNS_MAX_NAME_LENGTH, MAX_PORT, MIN_PORT } from '../../net/bounds.js';
import { CheckTimeout } from '../http-check/schema.js';
import { HOST_INPUT_MAX_CHARS, Nullable } from '../shared/schema.js';
import type { Assert, Describes } from '../shared/shape.js';

export const TlsCheckBody = Type.Object({
  host: Type.String({ minLength: 1, maxLength: HOST_INPUT_MAX_CHARS, description: 'a host name or IP address' }),
  port: Type.Optional(Type.Integer({ minimum: MIN_PORT, maximum: MAX_PORT, description: `default ${TLS_DEFAULT_PORT}` })),
  servername: Type.Optional(
    Type.String({ minLength: 1, maxLength: DNS_MAX_NAME_LENGTH, pattern: '^[A-Za-z0-9_.:-]+$', description: 'SNI and the name the certificate is checked against (default the host)' }),
  ),
  timeout: Type.Optional(CheckTimeout),
});

const Name = Type.String({ description: 'RFC 2253 (openssl x509 -nameopt RFC2253)' });

export const TlsCheckResult = Type.Object({
  host: Type.String(),
  port: Type.Integer(),
  ip: Nullable(Type.String({ description: 'the address connected to' })),
  servername: Nullable(Type.String({ description: 'the SNI sent; null for an IP address' })),
  protocol: Nullable(Type.String({ description: 'TLSv1.3, TLSv1.2, …' })),
  cipher: Nullable(Type.String({ description: 'OpenSSL’s name of the cipher suite' })),
  alpn: Nullable(Type.String()),
  authorized: Type.Boolean({ description: 'the chain is trusted (Node’s roots and NETDIAG_EXTRA_CA_CERTS) and the certificate names the host' }),
  authorization_error: Nullable(Type.String({ description: 'why not: CERT_HAS_EXPIRED, DEPTH_ZERO_SELF_SIGNED_CERT, UNABLE_TO_VERIFY_LEAF_SIGNATURE, ERR_TLS_CERT_ALTNAME_INVALID, …' })),
  hostname_match: Type.Boolean(),
  certificate: Nullable(
    Type.Object({
      subject: Name,
      issuer: Name,
      serial: Type.String({ description: 'hex' }),
      not_before: Type.String({ format: 'date-time' }),
      not_after: Type.String({ format: 'date-time' }),
      days_left: Type.Integer({ description: 'negative once expired' }),
      san: Type.Array(Type.String(), { description: 'DNS:…, IP Address:…, as openssl lists them' }),
      fingerprint_sha256: Type.String(),
      key: Type.Object({ type: Type.String({ description: 'RSA, EC, Ed25519, …' }), bits: Nullable(Type.Integer()) }),
    }),
  ),
  chain: Type.Array(Type.Object({ subject: Name, issuer: Name, not_after: Type.String({ format: 'date-time' }) }), {
    description: 'leaf first: what the server sent, completed from the trust store',
  }),
  error: Nullable(Type.String({ description: 'why there was no handshake (DNS, connect, handshake failure, timeout); a bad certificate is not an error' })),
});
type _Described = Assert<Describes<typeof TlsCheckResult, DomainTlsCheckResult>>;
