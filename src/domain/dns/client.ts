/**
 * The DNS client's public types. Callers (DNS lookup, IP lookup: PTR, DNSBL, Tor exit list) depend
 * on the DnsClient interface only, so tests and other tools can hand in their own.
 */

export interface DnsServer {
  host: string;
  port: number;
}

export const DNS_RECORD_TYPES = ['A', 'AAAA', 'MX', 'TXT', 'NS', 'CNAME', 'SOA', 'PTR', 'SRV', 'CAA', 'HTTPS', 'SVCB', 'DNSKEY', 'DS'] as const;
export type DnsRecordType = (typeof DNS_RECORD_TYPES)[number];

export function isDnsRecordType(value: string): value is DnsRecordType {
  return (DNS_RECORD_TYPES as readonly string[]).includes(value);
}

export interface ARecord { type: 'A'; ttl: number; address: string }
export interface AaaaRecord { type: 'AAAA'; ttl: number; address: string }
export interface MxRecord { type: 'MX'; ttl: number; priority: number; exchange: string }
/** Character-strings of one TXT record are joined without a separator (SPF, DKIM split long values). */
export interface TxtRecord { type: 'TXT'; ttl: number; value: string }
export interface NsRecord { type: 'NS'; ttl: number; value: string }
export interface CnameRecord { type: 'CNAME'; ttl: number; value: string }
export interface PtrRecord { type: 'PTR'; ttl: number; value: string }
export interface SoaRecord {
  type: 'SOA';
  ttl: number;
  nsname: string;
  hostmaster: string;
  serial: number;
  refresh: number;
  retry: number;
  expire: number;
  minttl: number;
}
export interface SrvRecord { type: 'SRV'; ttl: number; priority: number; weight: number; port: number; target: string }
export interface CaaRecord { type: 'CAA'; ttl: number; flags: number; tag: string; value: string }
/**
 * HTTPS and SVCB (RFC 9460): `params` maps each SvcParamKey as dig names it (alpn, port,
 * ipv4hint, ech, ipv6hint, mandatory, no-default-alpn, dohpath, ohttp, key65000 ...) to its value
 * as dig prints it, without the surrounding quotes ("h2,h3", "8443", "192.0.2.1,192.0.2.2"; a
 * key without a value, such as no-default-alpn, maps to ""). AliasMode (priority 0) has none.
 */
export interface SvcbRecord { type: 'HTTPS' | 'SVCB'; ttl: number; priority: number; target: string; params: Record<string, string> }
export interface HttpsRecord extends SvcbRecord { type: 'HTTPS' }
export interface SvcbOnlyRecord extends SvcbRecord { type: 'SVCB' }
/** DNSKEY (RFC 4034 2): `key` is the public key in base64, as zone files and dig show it. */
export interface DnskeyRecord { type: 'DNSKEY'; ttl: number; flags: number; protocol: number; algorithm: number; key: string }
/** DS (RFC 4034 5): `digest` in uppercase hexadecimal, as zone files and dig show it. */
export interface DsRecord { type: 'DS'; ttl: number; key_tag: number; algorithm: number; digest_type: number; digest: string }

export type DnsRecord =
  | ARecord
  | AaaaRecord
  | MxRecord
  | TxtRecord
  | NsRecord
  | CnameRecord
  | PtrRecord
  | SoaRecord
  | SrvRecord
  | CaaRecord
  | HttpsRecord
  | SvcbOnlyRecord
  | DnskeyRecord
  | DsRecord;

/** The record shape for one type, e.g. DnsRecordOf<'MX'> = MxRecord. */
export type DnsRecordOf<T extends DnsRecordType> = Extract<DnsRecord, { type: T }>;

/**
 * The response code of the answer; TIMEOUT when no server gave a usable answer in time;
 * UNREACHABLE when the last server asked could not be reached at all (port or host unreachable).
 */
export type DnsStatus =
  | 'NOERROR'
  | 'FORMERR'
  | 'SERVFAIL'
  | 'NXDOMAIN'
  | 'NOTIMP'
  | 'REFUSED'
  | 'YXDOMAIN'
  | 'YXRRSET'
  | 'NXRRSET'
  | 'NOTAUTH'
  | 'NOTZONE'
  | `RCODE_${number}`
  | 'TIMEOUT'
  | 'UNREACHABLE';

export interface DnsAnswer<T extends DnsRecordType = DnsRecordType> {
  /** The name asked, lowercase, without the trailing dot. */
  name: string;
  type: T;
  status: DnsStatus;
  /**
   * Answer-section records of the asked type, in the order the server sent them. A CNAME chain
   * leading to them is not included (except for CNAME queries, where the CNAME is the answer).
   */
  records: DnsRecordOf<T>[];
  /**
   * The other names the answer section speaks of: owners of its records other than the name
   * asked, and CNAME targets (the chain the resolver followed, lowercase, no trailing dot).
   * Absent when there are none. What a caller checks when a name may lead somewhere it must
   * not (a public CNAME into a private reverse zone).
   */
  aliases?: string[];
  /** "ip:port" of the server that answered ("ip" alone for port 53); on TIMEOUT the last one asked. */
  resolver: string;
  /** Milliseconds this call took, two decimals at most (near zero for a cache hit). */
  responseTimeMs: number;
  /** The transport of the answer: "tcp" after a truncated UDP answer. */
  transport: 'udp' | 'tcp' | 'cache';
  cached: boolean;
  /** Why there is no answer (TIMEOUT, UNREACHABLE): the last attempt's failure. Null otherwise. */
  error: string | null;
  /**
   * The AD bit of the answer: the resolver says it validated the data with DNSSEC (RFC 4035
   * 3.2.3). A resolver sets it only for a query with the DO bit (`dnssec: true`); false without
   * an answer.
   */
  authenticated: boolean;
}

export interface DnsQueryOptions {
  /** Per-attempt timeout (UDP plus any TCP retry); the whole query takes at most attempts x this. */
  timeoutMs?: number;
  /** Ask these servers instead of the configured ones (in order, failing over). */
  servers?: readonly DnsServer[];
  /** How many servers to try (see DNS_ATTEMPTS). */
  attempts?: number;
  /** false: skip the cache for this query (neither read nor written). */
  cache?: boolean;
  /** Ask with the DO bit (RFC 3225): the resolver then sets AD on data it validated. Default false. */
  dnssec?: boolean;
}

export interface DnsClient {
  query<T extends DnsRecordType>(name: string, type: T, opts?: DnsQueryOptions): Promise<DnsAnswer<T>>;
}
