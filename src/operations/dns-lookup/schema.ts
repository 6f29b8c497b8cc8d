import { Type, type TProperties } from 'typebox';
import { DNS_DEFAULT_TYPE, DNS_INPUT_MAX_CHARS, type DnsLookupResult as DomainDnsLookupResult } from '../../domain/dns/index.js';
import { DNS_RECORD_TYPES } from '../../domain/dns/client.js';
import type { Assert, Describes } from '../shared/shape.js';

export const DOMAIN_DESCRIPTION = 'a domain name; internationalised names are converted to punycode';
export const Domain = Type.String({ minLength: 1, maxLength: DNS_INPUT_MAX_CHARS, description: DOMAIN_DESCRIPTION });
/**
 * Accepted in any case ("mx"), as dig does, like every enumeration of a request: the validator
 * answers it in canonical case (src/http/validation.ts).
 */
export const RecordType = Type.Enum([...DNS_RECORD_TYPES], {
  type: 'string',
  default: DNS_DEFAULT_TYPE,
  description: `record type, case-insensitive: one of ${DNS_RECORD_TYPES.join(', ')}`,
});

export const Dnssec = Type.Boolean({
  default: false,
  description: 'ask with the DNSSEC OK (DO) bit; data then carries `authenticated`, the AD bit of the resolver\'s answer',
});

export const DnsLookupBody = Type.Object({ domain: Domain, type: Type.Optional(RecordType), dnssec: Type.Optional(Dnssec) });

/** One schema for every record type: `type`, `ttl` and the fields of that type. */
const DnsRecord = Type.Object({
  type: Type.String(),
  ttl: Type.Integer({ description: 'seconds' }),
  address: Type.Optional(Type.String({ description: 'A, AAAA' })),
  priority: Type.Optional(Type.Integer({ description: 'MX, SRV, HTTPS, SVCB (SvcPriority: 0 is AliasMode)' })),
  exchange: Type.Optional(Type.String({ description: 'MX' })),
  value: Type.Optional(Type.String({ description: 'TXT (chunks joined), NS, CNAME, PTR, CAA' })),
  nsname: Type.Optional(Type.String({ description: 'SOA' })),
  hostmaster: Type.Optional(Type.String()),
  serial: Type.Optional(Type.Integer()),
  refresh: Type.Optional(Type.Integer()),
  retry: Type.Optional(Type.Integer()),
  expire: Type.Optional(Type.Integer()),
  minttl: Type.Optional(Type.Integer()),
  weight: Type.Optional(Type.Integer({ description: 'SRV' })),
  port: Type.Optional(Type.Integer({ description: 'SRV' })),
  target: Type.Optional(Type.String({ description: 'SRV, HTTPS, SVCB: a name without the trailing dot, "." for the root (HTTPS, SVCB: the name the record is at)' })),
  flags: Type.Optional(Type.Integer({ description: 'CAA, DNSKEY (257 for a key-signing key, 256 for a zone-signing key)' })),
  tag: Type.Optional(Type.String({ description: 'CAA' })),
  params: Type.Optional(
    Type.Record(Type.String(), Type.String(), {
      description:
        'HTTPS, SVCB: each SvcParam as dig prints it, key -> value without the quotes: alpn "h2,h3", port "8443", ipv4hint "192.0.2.1,192.0.2.2", ipv6hint, ech (base64), mandatory "alpn,port", dohpath, an unknown key as "key65000"; a key without a value (no-default-alpn, ohttp) maps to ""',
    }),
  ),
  protocol: Type.Optional(Type.Integer({ description: 'DNSKEY: 3 (RFC 4034), or whatever other value the record holds' })),
  algorithm: Type.Optional(Type.Integer({ description: 'DNSKEY, DS: the DNSSEC algorithm number (8 RSASHA256, 13 ECDSAP256SHA256, 15 ED25519, ...)' })),
  key: Type.Optional(Type.String({ description: 'DNSKEY: the public key, base64' })),
  key_tag: Type.Optional(Type.Integer({ description: 'DS: the key tag of the DNSKEY it points to' })),
  digest_type: Type.Optional(Type.Integer({ description: 'DS: 1 SHA-1, 2 SHA-256, 4 SHA-384' })),
  digest: Type.Optional(Type.String({ description: 'DS: the digest in uppercase hexadecimal, as dig prints it' })),
});

/** The fields of a lookup's result, which a bulk item has too. */
export const dnsResultFields = {
  domain: Type.String({ description: 'the name queried: punycode, lowercase, no trailing dot; for PTR of an IP its reverse name' }),
  type: Type.Enum([...DNS_RECORD_TYPES], { description: 'the record type asked, uppercase' }),
  status: Type.String({ description: 'NOERROR, NXDOMAIN, SERVFAIL, REFUSED, … (the response code), TIMEOUT (no answer in time) or UNREACHABLE (the resolver could not be reached: port unreachable, no route)' }),
  records: Type.Array(DnsRecord),
  resolver: Type.String({ description: 'the server that answered, ip or ip:port' }),
  response_time: Type.Number({ description: 'ms' }),
  cached: Type.Boolean({ description: 'answered from the TTL-honouring cache' }),
  authenticated: Type.Optional(
    Type.Boolean({ description: 'only with dnssec: true: the AD bit of the answer, the resolver saying it validated the data with DNSSEC (false without an answer)' }),
  ),
} satisfies TProperties;

export const DnsLookupResult = Type.Object(dnsResultFields);
type _Described = Assert<Describes<typeof DnsLookupResult, DomainDnsLookupResult>>;
