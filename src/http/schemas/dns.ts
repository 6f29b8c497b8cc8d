import { Type, type TProperties } from 'typebox';
import { DNS_BULK_MAX_DOMAINS, DNS_DEFAULT_TYPE, DNS_INPUT_MAX_CHARS } from '../../domain/dns/index.js';
import { BulkEntry, EntryError, EntryErrorCode } from '../../operations/shared/bulk-entries.js';
import { DNS_RECORD_TYPES } from '../../domain/dns/client.js';
import { Nullable, optionalExcept } from '../../operations/shared/schema.js';

const DOMAIN_DESCRIPTION = 'a domain name; internationalised names are converted to punycode';
const Domain = Type.String({ minLength: 1, maxLength: DNS_INPUT_MAX_CHARS, description: DOMAIN_DESCRIPTION });
/**
 * Accepted in any case ("mx"), as dig does, like every enumeration of a request: the validator
 * answers it in canonical case (src/http/validation.ts).
 */
const RecordType = Type.Enum([...DNS_RECORD_TYPES], {
  type: 'string',
  default: DNS_DEFAULT_TYPE,
  description: `record type, case-insensitive: one of ${DNS_RECORD_TYPES.join(', ')}`,
});

const Dnssec = Type.Boolean({
  default: false,
  description: 'ask with the DNSSEC OK (DO) bit; data then carries `authenticated`, the AD bit of the resolver\'s answer',
});

export const DnsLookupBody = Type.Object({ domain: Domain, type: Type.Optional(RecordType), dnssec: Type.Optional(Dnssec) });
export const DnsBulkBody = Type.Object({
  domains: Type.Array(BulkEntry(DOMAIN_DESCRIPTION), { minItems: 1, maxItems: DNS_BULK_MAX_DOMAINS }),
  type: Type.Optional(RecordType),
  dnssec: Type.Optional(Dnssec),
});
export const WhoisBody = Type.Object({ domain: Domain });

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
  target: Type.Optional(Type.String({ description: 'SRV, HTTPS, SVCB: a name without the trailing dot, "." for the root (HTTPS, SVCB: the owner name itself)' })),
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

const resultFields = {
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

export const DnsLookupResult = Type.Object(resultFields);

/** A bulk item: a result, or `{domain (as given), type, error, error_code}` for an entry that is not a domain name. */
export const DnsBulkItem = Type.Object({
  ...optionalExcept(resultFields, ['domain', 'type']),
  error: Type.Optional(EntryError),
  error_code: EntryErrorCode,
});

export const WhoisHop = Type.Object({
  server: Type.String({ description: 'WHOIS: host or host:port; RDAP: the URL asked' }),
  status: Type.String({ description: 'ok, truncated, timeout or failed' }),
  error: Nullable(Type.String()),
  bytes: Type.Integer(),
  response_time: Type.Number(),
});

export const WhoisResult = Type.Object({
  domain: Type.String(),
  registered: Nullable(Type.Boolean({ description: 'null when no server could tell' })),
  registrar: Nullable(Type.String()),
  registrar_url: Nullable(Type.String()),
  whois_server: Nullable(Type.String()),
  creation_date: Nullable(Type.String({ description: 'ISO 8601' })),
  updated_date: Nullable(Type.String({ description: 'ISO 8601' })),
  expiration_date: Nullable(Type.String({ description: 'ISO 8601' })),
  name_servers: Type.Array(Type.String()),
  status: Type.Array(Type.String({ description: 'EPP status codes' })),
  dnssec: Nullable(Type.Boolean()),
  raw: Type.String({ description: 'the registry\'s RDAP JSON text, or the WHOIS servers\' text (bounded)' }),
  hops: Type.Array(WhoisHop),
  error: Nullable(Type.String()),
  source: Type.Union([Type.Literal('rdap'), Type.Literal('whois')], { description: 'rdap, or whois (port 43) for a TLD with no RDAP service' }),
  rdap_server: Nullable(Type.String({ description: 'the registry\'s RDAP base URL asked; null for whois' })),
  registrant: Nullable(Type.String({ description: 'RDAP: the registrant\'s organisation when published' })),
  abuse_email: Nullable(Type.String({ description: 'RDAP: the abuse contact\'s e-mail' })),
});
