import { Type } from 'typebox';
import { DNS_MAX_NAME_LENGTH, MAX_PORT, MIN_PORT } from '../../net/bounds.js';
import {
  CHECK_DEFAULT_TIMEOUT_S,
  CHECK_MAX_TIMEOUT_S,
  CHECK_MIN_TIMEOUT_S,
  HTTP_MAX_BODY_BYTES,
  HTTP_MAX_REDIRECTS,
  HTTP_MAX_URL_CHARS,
  TLS_DEFAULT_PORT,
} from '../../domain/checks/defaults.js';
import { HOST_INPUT_MAX_CHARS, Nullable } from '../../operations/shared/schema.js';

const Timeout = Type.Integer({ minimum: CHECK_MIN_TIMEOUT_S, maximum: CHECK_MAX_TIMEOUT_S, description: `seconds for the whole check (default ${CHECK_DEFAULT_TIMEOUT_S})` });
/** HTTP_MAX_BODY_BYTES in words, as the descriptions say it. */
const MAX_BODY = `${HTTP_MAX_BODY_BYTES / (1024 * 1024)} MiB`;
const Ms = (description: string) => Type.Number({ description });

export const HttpCheckBody = Type.Object({
  url: Type.String({ minLength: 1, maxLength: HTTP_MAX_URL_CHARS, description: 'an http:// or https:// URL, without user name or password' }),
  method: Type.Optional(Type.Union([Type.Literal('GET'), Type.Literal('HEAD')], { default: 'GET', description: 'default GET' })),
  follow_redirects: Type.Optional(
    Type.Boolean({ default: true, description: `default true; at most ${HTTP_MAX_REDIRECTS} redirects, each target checked by the target policy` }),
  ),
  timeout: Type.Optional(Timeout),
});

export const HttpCheckResult = Type.Object({
  url: Type.String(),
  final_url: Type.String({ description: 'the URL of the last request made' }),
  ip: Nullable(Type.String({ description: 'the address the last request went to' })),
  status: Nullable(Type.Integer({ description: 'the status of the last answer; null when none came' })),
  http_version: Nullable(Type.String({ description: '1.1 or 1.0' })),
  redirects: Type.Array(
    Type.Object({ url: Type.String(), status: Type.Integer(), location: Type.String({ description: 'the absolute URL followed' }) }),
    { description: 'the redirects followed, in order' },
  ),
  timings: Type.Object(
    {
      dns: Nullable(Ms('name resolved, ms from the start of the last request (curl time_namelookup)')),
      connect: Nullable(Ms('TCP connected (curl time_connect)')),
      tls: Nullable(Ms('TLS handshake done (curl time_appconnect); null over http')),
      ttfb: Nullable(Ms('first byte of the answer (curl time_starttransfer)')),
      total: Ms('the whole check, redirects included, ms (curl time_total)'),
      redirect: Ms('the redirects before the last request, ms (curl time_redirect)'),
    },
    { description: 'milliseconds' },
  ),
  headers: Type.Record(Type.String(), Type.String(), { description: 'the last answer’s headers, names lowercased, repeated ones joined with ", "' }),
  body_bytes: Type.Integer({ description: `body bytes read, at most ${MAX_BODY}; the body is never kept` }),
  body_sha256: Nullable(Type.String({ description: 'SHA-256 (hex) of the bytes read' })),
  body_truncated: Type.Boolean({ description: `the body went on past ${MAX_BODY} and was not read further` }),
  tls: Nullable(Type.Object({ protocol: Nullable(Type.String()), cipher: Nullable(Type.String()) })),
  error: Nullable(Type.String({ description: 'why the check ended without a full answer: DNS, connect, TLS, timeout, a refused or looping redirect' })),
});

export const TlsCheckBody = Type.Object({
  host: Type.String({ minLength: 1, maxLength: HOST_INPUT_MAX_CHARS, description: 'a host name or IP address' }),
  port: Type.Optional(Type.Integer({ minimum: MIN_PORT, maximum: MAX_PORT, description: `default ${TLS_DEFAULT_PORT}` })),
  servername: Type.Optional(
    Type.String({ minLength: 1, maxLength: DNS_MAX_NAME_LENGTH, pattern: '^[A-Za-z0-9_.:-]+$', description: 'SNI and the name the certificate is checked against (default the host)' }),
  ),
  timeout: Type.Optional(Timeout),
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
