import { X509Certificate } from 'node:crypto';
import type { DetailedPeerCertificate } from 'node:tls';
import { TLS_MAX_CHAIN } from './defaults.js';

/** A certificate as the TLS check shows it; names and dates read as `openssl x509` prints them. */
export interface CertificateInfo {
  /** RFC 2253, as `openssl x509 -noout -subject -nameopt RFC2253` prints it (most specific first). */
  subject: string;
  issuer: string;
  /** Hex, as `openssl x509 -serial`. */
  serial: string;
  /** ISO 8601. */
  not_before: string;
  not_after: string;
  /** Whole days from now to not_after; negative once expired. */
  days_left: number;
  /** Subject alternative names as openssl lists them (`DNS:example.com`, `IP Address:192.0.2.1`). */
  san: string[];
  /** Colon-separated hex, as `openssl x509 -fingerprint -sha256`. */
  fingerprint_sha256: string;
  key: { type: string; bits: number | null };
}

export interface ChainEntry {
  subject: string;
  issuer: string;
  not_after: string;
}

const DAY_MS = 86_400_000;

/** Node's one-RDN-a-line name (already escaped per RFC 2253, least specific first) as RFC 2253 text. */
export function rfc2253(lines: string): string {
  return lines.split('\n').reverse().join(',');
}

function iso(date: string): string {
  const ms = Date.parse(date);
  return Number.isNaN(ms) ? date : new Date(ms).toISOString();
}

/**
 * Node's subjectAltName text (`DNS:a, IP Address:192.0.2.1`, a value holding a comma or quote
 * written as a JSON string) as a list, in one pass: the text comes from a hostile server.
 */
export function parseSubjectAltName(text: string | undefined): string[] {
  if (!text) return [];
  const out: string[] = [];
  let i = 0;
  while (i < text.length) {
    const colon = text.indexOf(':', i);
    if (colon === -1) break;
    const type = text.slice(i, colon);
    let j = colon + 1;
    let value: string;
    if (text[j] === '"') {
      // A JSON string: to the first quote not escaped.
      let k = j + 1;
      while (k < text.length && text[k] !== '"') k += text[k] === '\\' ? 2 : 1;
      const quoted = text.slice(j, k + 1);
      try {
        value = JSON.parse(quoted) as string;
      } catch {
        value = quoted;
      }
      j = k + 1;
    } else {
      const end = text.indexOf(', ', j);
      value = text.slice(j, end === -1 ? text.length : end);
      j = end === -1 ? text.length : end;
    }
    out.push(`${type}:${value}`);
    // Past the ", " separating entries.
    i = text.startsWith(', ', j) ? j + 2 : j + 1;
  }
  return out;
}

const CURVE_BITS: Record<string, number> = { prime256v1: 256, secp384r1: 384, secp521r1: 521, secp256k1: 256, secp224r1: 224 };
const KEY_TYPES: Record<string, string> = { rsa: 'RSA', 'rsa-pss': 'RSA-PSS', ec: 'EC', dsa: 'DSA', ed25519: 'Ed25519', ed448: 'Ed448' };

function keyOf(x509: X509Certificate, peerBits: number | undefined): CertificateInfo['key'] {
  const key = x509.publicKey;
  const kind = key.asymmetricKeyType ?? 'unknown';
  const details = key.asymmetricKeyDetails ?? {};
  const bits =
    peerBits ??
    details.modulusLength ??
    (details.namedCurve !== undefined ? CURVE_BITS[details.namedCurve] : undefined) ??
    (kind === 'ed25519' ? 256 : kind === 'ed448' ? 456 : undefined);
  return { type: KEY_TYPES[kind] ?? kind.toUpperCase(), bits: bits ?? null };
}

/** The certificate's fields, from its DER bytes. */
export function describeCertificate(raw: Buffer, now: number, peerBits?: number): CertificateInfo {
  const x509 = new X509Certificate(raw);
  const notAfter = Date.parse(x509.validTo);
  return {
    subject: rfc2253(x509.subject),
    issuer: rfc2253(x509.issuer),
    serial: x509.serialNumber,
    not_before: iso(x509.validFrom),
    not_after: iso(x509.validTo),
    days_left: Number.isNaN(notAfter) ? 0 : Math.floor((notAfter - now) / DAY_MS),
    san: parseSubjectAltName(x509.subjectAltName),
    fingerprint_sha256: x509.fingerprint256,
    key: keyOf(x509, peerBits),
  };
}

/**
 * The chain as Node gives it (`getPeerCertificate(true)`): what the server sent, completed from
 * the trust store where it could be, leaf first, up to a self-signed root or TLS_MAX_CHAIN.
 */
export function chainOf(peer: DetailedPeerCertificate): ChainEntry[] {
  const chain: ChainEntry[] = [];
  const seen = new Set<string>();
  let cert: DetailedPeerCertificate | undefined = peer;
  while (cert?.raw && chain.length < TLS_MAX_CHAIN && !seen.has(cert.fingerprint256)) {
    seen.add(cert.fingerprint256);
    const x509 = new X509Certificate(cert.raw);
    chain.push({ subject: rfc2253(x509.subject), issuer: rfc2253(x509.issuer), not_after: iso(x509.validTo) });
    cert = cert.issuerCertificate;
  }
  return chain;
}
