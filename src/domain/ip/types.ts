import type { EntryError } from '../bulk-entries.js';
import type { GeoReader, GeoRecord } from './geoip.js';
import type { HostingList } from './hosting.js';
import type { AddressType } from '../../net/ranges.js';

/**
 * The part of the DNS client IP lookup needs, declared here so that any client with this shape
 * fits (the stub resolver does) and tests can hand in their own.
 */
export interface DnsQuerier {
  query(
    name: string,
    type: 'A' | 'PTR',
    opts?: { timeoutMs?: number },
  ): Promise<{ status: string; records: ReadonlyArray<{ address?: string; value?: string }>; aliases?: readonly string[] }>;
}

export interface IpLookupDeps {
  geo: GeoReader;
  /** Without a DNS client, hostname and the DNS-based checks are reported as unknown (null). */
  dns?: DnsQuerier | null;
  /** DNSBL zones asked by security_check (Config.dnsblZones). Default: none. */
  dnsblZones?: readonly string[];
  /** The Tor exit list zone; null: do not ask. Default: TOR_DNSEL_ZONE. */
  torExitZone?: string | null;
  /** Default: the shipped list (data/hosting-asns.json beside hosting.ts). */
  hosting?: HostingList;
  ptrTimeoutMs?: number;
  securityTimeoutMs?: number;
  bulkConcurrency?: number;
}

export interface IpLookupOptions {
  /** Adds hostname (PTR), continent, accuracy radius, networks and the special range. */
  detailed?: boolean;
  /** Adds `security` from the Tor exit list, the DNSBLs and the local data. */
  security_check?: boolean;
}

/** The GeoIP fields every lookup reports. */
type BaseLocation = Pick<GeoRecord, 'country' | 'country_code' | 'region' | 'city' | 'postal_code' | 'latitude' | 'longitude' | 'timezone'>;
/** The GeoIP fields `detailed` adds (GeoRecord documents them). */
type DetailedLocationField = 'continent' | 'accuracy_radius' | 'network' | 'registered_country' | 'registered_country_code';

export interface IpLocation extends BaseLocation, Partial<Pick<GeoRecord, DetailedLocationField>> {
  /** The ISP where an ISP database says so, else the AS organisation. */
  isp: string | null;
}

export interface IpAsn {
  number: number | null;
  organization: string | null;
  /** The CIDR the ASN record covers. */
  network: string | null;
}

export interface BlacklistResult {
  /** The DNSBL zone asked. */
  list: string;
  /** true: listed for abuse; false: not listed (NXDOMAIN, or a policy-only listing); null: unknown (timeout, error). */
  listed: boolean | null;
  /** The A records the list answered (e.g. ["127.0.0.2"]), empty when none. */
  response: string[];
}

export interface SecurityReport {
  /** null: unknown (the Tor list did not answer in time, or the address is IPv6, which it does not list). */
  is_tor: boolean | null;
  is_proxy: boolean | null;
  is_hosting: boolean;
  /** Not a public unicast address (private, loopback, documentation, ...). */
  is_bogon: boolean;
  blacklists: BlacklistResult[];
  /** 0-100; see docs/risk-score.md. Unknown checks add nothing. */
  risk_score: number;
  /** `tor_exit`, `proxy`, `listed:<zone>`, `hosting`, `bogon`. */
  threats: string[];
}

export interface IpLookupResult {
  /** The address looked up, canonical; an IPv4-mapped IPv6 address is reported as its IPv4. */
  ip: string;
  version: 4 | 6;
  type: AddressType;
  /** PTR name, only with `detailed`; null when there is none or it did not answer in time. */
  hostname: string | null;
  location: IpLocation;
  asn: IpAsn;
  /** detailed only: the special-purpose range the address is in, null for public addresses. */
  range?: string | null;
  security?: SecurityReport;
}

/** A bulk entry that is not an address: `error` names it (`ips[3]: …`), `error_code` is validation_error. */
export interface IpLookupFailure extends EntryError {
  ip: string;
}

export type IpBulkItem = IpLookupResult | IpLookupFailure;
