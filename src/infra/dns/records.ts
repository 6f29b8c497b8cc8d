import type { Answer } from 'dns-packet';
import type { DnsRecord, DnsRecordType } from '../../domain/dns/client.js';
import { decodeSvcb } from './svcb.js';

/**
 * The type as dns-packet spells it on the wire: it knows no SVCB (64) or HTTPS (65), and
 * encodes and decodes them by number, their RDATA a Buffer (decoded in svcb.ts).
 */
const WIRE_TYPES: Partial<Record<DnsRecordType, string>> = { SVCB: 'UNKNOWN_64', HTTPS: 'UNKNOWN_65' };

export function wireType(type: DnsRecordType): string {
  return WIRE_TYPES[type] ?? type;
}

/** dns-packet decodes the root name as "."; everywhere else names come without the trailing dot. */
function hostName(name: string): string {
  return name === '' ? '.' : name;
}

function text(chunk: string | Buffer): string {
  return typeof chunk === 'string' ? chunk : chunk.toString('utf8');
}

/**
 * One wire record as our record shape, or null for a record of another type (or one the decoder
 * could not give structure to). `ttl` is passed in so the cache can report remaining TTLs.
 */
export function toDnsRecord(answer: Answer, type: DnsRecordType, ttl = answer.type === 'OPT' ? 0 : answer.ttl ?? 0): DnsRecord | null {
  if ((answer.type as string) !== wireType(type)) return null;
  if (type === 'SVCB' || type === 'HTTPS') {
    const rdata = (answer as { data?: unknown }).data;
    const svcb = Buffer.isBuffer(rdata) ? decodeSvcb(rdata) : null;
    return svcb === null ? null : { type, ttl, ...svcb };
  }
  switch (answer.type) {
    case 'A':
      return { type: 'A', ttl, address: answer.data };
    case 'AAAA':
      return { type: 'AAAA', ttl, address: answer.data };
    case 'NS':
      return { type: 'NS', ttl, value: hostName(answer.data) };
    case 'CNAME':
      return { type: 'CNAME', ttl, value: hostName(answer.data) };
    case 'PTR':
      return { type: 'PTR', ttl, value: hostName(answer.data) };
    case 'MX':
      return { type: 'MX', ttl, priority: answer.data.preference ?? 0, exchange: hostName(answer.data.exchange) };
    case 'TXT': {
      const chunks = Array.isArray(answer.data) ? answer.data : [answer.data];
      return { type: 'TXT', ttl, value: chunks.map(text).join('') };
    }
    case 'SOA':
      return {
        type: 'SOA',
        ttl,
        nsname: hostName(answer.data.mname),
        hostmaster: hostName(answer.data.rname),
        serial: answer.data.serial ?? 0,
        refresh: answer.data.refresh ?? 0,
        retry: answer.data.retry ?? 0,
        expire: answer.data.expire ?? 0,
        minttl: answer.data.minimum ?? 0,
      };
    case 'SRV':
      return {
        type: 'SRV',
        ttl,
        priority: answer.data.priority ?? 0,
        weight: answer.data.weight ?? 0,
        port: answer.data.port,
        target: hostName(answer.data.target),
      };
    case 'CAA':
      return { type: 'CAA', ttl, flags: answer.data.flags ?? 0, tag: answer.data.tag, value: answer.data.value };
    case 'DNSKEY':
      return {
        type: 'DNSKEY',
        ttl,
        flags: answer.data.flags,
        // Read by decode.ts's DNSKEY decoder, which keeps it (dns-packet's own refuses all but 3).
        protocol: (answer.data as { protocol?: number }).protocol ?? 3,
        algorithm: answer.data.algorithm,
        key: answer.data.key.toString('base64'),
      };
    case 'DS':
      return {
        type: 'DS',
        ttl,
        key_tag: answer.data.keyTag,
        algorithm: answer.data.algorithm,
        digest_type: answer.data.digestType,
        digest: answer.data.digest.toString('hex').toUpperCase(),
      };
    default:
      return null;
  }
}

/** The same record with another TTL (the cache hands out remaining TTLs). */
export function withTtl(record: DnsRecord, ttl: number): DnsRecord {
  return { ...record, ttl };
}
