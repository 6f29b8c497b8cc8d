import { settleEntry } from '../bulk-entries.js';
import { mapConcurrent } from '../../lib/map-concurrent.js';
import ipaddr from 'ipaddr.js';
import { ValidationError } from '../../errors.js';
import { hostingList } from './hosting.js';
import type { AsnRecord, GeoRecord } from './geoip.js';
import { parseIpStrict } from '../../net/ip-text.js';
import { classifyAddress, type Classification } from '../../net/ranges.js';
import {
  IP_BULK_CONCURRENCY,
  IP_BULK_MAX,
  IP_INPUT_MAX_CHARS,
  PTR_TIMEOUT_MS,
  RISK_MAX,
  RISK_POINTS,
  SECURITY_DNS_TIMEOUT_MS,
  TOR_DNSEL_ZONE,
} from './defaults.js';
import { checkDnsbl, checkTorExit, lookupPtr, type DnsblOutcome } from './dns-checks.js';
import type {
  IpBulkItem,
  IpLocation,
  IpLookupDeps,
  IpLookupOptions,
  IpLookupResult,
  SecurityReport,
} from './types.js';

export const INVALID_IP_RULE = 'must be an IPv4 or IPv6 address';

type Addr = ipaddr.IPv4 | ipaddr.IPv6;

/**
 * The address to look up, or null. Only the canonical spellings (dotted quad without leading
 * zeros, RFC 4291 IPv6 with an optional zone): `010.1.1.1` or `2130706433` mean different
 * addresses to different software, so a lookup of them would answer a question nobody asked.
 * An IPv4-mapped IPv6 address is the IPv4 address: that is the host the packets reach, and the
 * data is keyed by it.
 */
export function parseLookupIp(input: string): Addr | null {
  const addr = parseIpStrict(input.trim());
  if (!addr) return null;
  if (addr.kind() === 'ipv6') {
    const v6 = addr as ipaddr.IPv6;
    if (v6.isIPv4MappedAddress()) return v6.toIPv4Address();
    // The zone names an interface on the asker's machine; it means nothing in a report.
    return new ipaddr.IPv6(v6.parts);
  }
  return addr;
}

function locationOf(geo: GeoRecord | null, asn: AsnRecord | null, detailed: boolean): IpLocation {
  const location: IpLocation = {
    country: geo?.country ?? null,
    country_code: geo?.country_code ?? null,
    region: geo?.region ?? null,
    city: geo?.city ?? null,
    postal_code: geo?.postal_code ?? null,
    latitude: geo?.latitude ?? null,
    longitude: geo?.longitude ?? null,
    timezone: geo?.timezone ?? null,
    isp: asn?.isp ?? asn?.organization ?? null,
  };
  if (detailed) {
    location.continent = geo?.continent ?? null;
    location.accuracy_radius = geo?.accuracy_radius ?? null;
    location.network = geo?.network ?? null;
    location.registered_country = geo?.registered_country ?? null;
    location.registered_country_code = geo?.registered_country_code ?? null;
  }
  return location;
}

/** risk_score and threats from the signals; the rules are written out in docs/risk-score.md. */
export function scoreRisk(signals: {
  isTor: boolean | null;
  isProxy: boolean | null;
  isHosting: boolean;
  isBogon: boolean;
  listedOn: readonly string[];
}): { risk_score: number; threats: string[] } {
  const threats: string[] = [];
  let score = 0;
  if (signals.isTor === true) {
    score += RISK_POINTS.torExit;
    threats.push('tor_exit');
  } else if (signals.isProxy === true) {
    score += RISK_POINTS.proxy;
    threats.push('proxy');
  }
  if (signals.listedOn.length > 0) {
    score += Math.min(signals.listedOn.length * RISK_POINTS.perListing, RISK_POINTS.listingsMax);
    threats.push(...signals.listedOn.map((zone) => `listed:${zone}`));
  }
  if (signals.isHosting) {
    score += RISK_POINTS.hosting;
    threats.push('hosting');
  }
  if (signals.isBogon) {
    score += RISK_POINTS.bogon;
    threats.push('bogon');
  }
  return { risk_score: Math.min(score, RISK_MAX), threats };
}

async function securityReport(
  deps: IpLookupDeps,
  addr: Addr,
  classification: Classification,
  asn: AsnRecord | null,
): Promise<SecurityReport> {
  const isBogon = classification.type !== 'public';
  if (isBogon) {
    // Lists hold only public addresses, and asking a public list about 10.0.0.1 would tell
    // a third party about the asker's network: nothing is asked.
    return { is_tor: false, is_proxy: false, is_hosting: false, is_bogon: true, blacklists: [], ...scoreRisk({ isTor: false, isProxy: false, isHosting: false, isBogon: true, listedOn: [] }) };
  }
  const dns = deps.dns ?? null;
  const deadline = deps.securityTimeoutMs ?? SECURITY_DNS_TIMEOUT_MS;
  const torZone = deps.torExitZone === undefined ? TOR_DNSEL_ZONE : deps.torExitZone;
  const zones = deps.dnsblZones ?? [];
  const [isTor, lists] = await Promise.all([
    dns && torZone ? checkTorExit(dns, addr, torZone, deadline) : Promise.resolve(null),
    Promise.all(
      zones.map((zone): Promise<DnsblOutcome> =>
        dns ? checkDnsbl(dns, addr, zone, deadline) : Promise.resolve({ list: zone, listed: null, response: [], proxy: false }),
      ),
    ),
  ]);
  const hosting = (deps.hosting ?? hostingList()).match(asn?.number ?? null, asn?.organization ?? null);
  const proxyListed = lists.some((l) => l.proxy);
  const isProxy = isTor === true || proxyListed ? true : isTor === null ? null : false;
  const listedOn = lists.filter((l) => l.listed === true).map((l) => l.list);
  return {
    is_tor: isTor,
    is_proxy: isProxy,
    is_hosting: hosting !== null,
    is_bogon: false,
    blacklists: lists.map(({ list, listed, response }) => ({ list, listed, response })),
    ...scoreRisk({ isTor, isProxy, isHosting: hosting !== null, isBogon: false, listedOn }),
  };
}

/**
 * Location, ASN and type of one address; PTR with `detailed`; Tor/DNSBL/hosting with
 * `security_check`. Special (non-public) addresses get no location, no ASN and no PTR. Every DNS-based
 * part has a deadline and degrades to null; only an invalid address is an error.
 */
export async function lookupIp(deps: IpLookupDeps, ip: string, opts: IpLookupOptions = {}): Promise<IpLookupResult> {
  const addr = typeof ip === 'string' ? parseLookupIp(ip) : null;
  if (!addr) throw new ValidationError('ip', INVALID_IP_RULE);
  return lookupAddress(deps, addr, opts);
}

async function lookupAddress(deps: IpLookupDeps, addr: Addr, opts: IpLookupOptions): Promise<IpLookupResult> {
  const detailed = opts.detailed === true;
  const text = addr.toString();
  const classification = classifyAddress(addr);
  const isPublic = classification.type === 'public';
  const geo = isPublic ? deps.geo.city(text) : null;
  const asn = isPublic ? deps.geo.asn(text) : null;

  const dns = deps.dns ?? null;
  // A special address gets no PTR query: asking the resolver about 10.0.0.1 or fe80::1 would
  // hand out the names of the operator's own network (and load its internal DNS) to any caller.
  const [hostname, security] = await Promise.all([
    detailed && dns && isPublic ? lookupPtr(dns, addr, deps.ptrTimeoutMs ?? PTR_TIMEOUT_MS) : Promise.resolve(null),
    opts.security_check === true ? securityReport(deps, addr, classification, asn) : Promise.resolve(undefined),
  ]);

  const result: IpLookupResult = {
    ip: text,
    version: addr.kind() === 'ipv4' ? 4 : 6,
    type: classification.type,
    hostname,
    // Special addresses were not looked up (geo and asn are null): every location field is null.
    location: locationOf(geo, asn, detailed),
    asn: { number: asn?.number ?? null, organization: asn?.organization ?? null, network: asn?.network ?? null },
  };
  if (detailed) result.range = isPublic ? null : classification.range || null;
  if (security) result.security = security;
  return result;
}

/** A bulk entry's address, or the ValidationError naming `field` (its length is checked first). */
function bulkAddress(ip: unknown, field: string): Addr {
  if (typeof ip !== 'string') throw new ValidationError(field, 'must be a string');
  if (ip.length > IP_INPUT_MAX_CHARS) throw new ValidationError(field, `must be at most ${IP_INPUT_MAX_CHARS} characters`);
  const addr = parseLookupIp(ip);
  if (!addr) throw new ValidationError(field, INVALID_IP_RULE);
  return addr;
}

/**
 * Up to IP_BULK_MAX addresses, answered in input order. An entry that is not an address gets
 * `{ip, error, error_code}` (error naming `ips[i]` and the rule) and the others still answer;
 * the list itself being wrong (not an array, empty, too long) is a ValidationError on `ips`.
 */
export async function lookupBulk(
  deps: IpLookupDeps,
  ips: readonly string[],
  opts: IpLookupOptions = {},
  /** Told each input position's item as it completes (jobs stream these). */
  onItem?: (index: number, item: IpBulkItem) => void,
): Promise<IpBulkItem[]> {
  if (!Array.isArray(ips)) throw new ValidationError('ips', 'must be an array of IP addresses');
  if (ips.length === 0) throw new ValidationError('ips', 'at least 1 entry');
  if (ips.length > IP_BULK_MAX) throw new ValidationError('ips', `at most ${IP_BULK_MAX} entries`);
  return mapConcurrent(ips, deps.bulkConcurrency ?? IP_BULK_CONCURRENCY, async (ip, i): Promise<IpBulkItem> => {
    const entry = await settleEntry(`ips[${i}]`, () => bulkAddress(ip, `ips[${i}]`));
    const item: IpBulkItem = 'value' in entry ? await lookupAddress(deps, entry.value, opts) : { ip: String(ip), ...entry.refused };
    onItem?.(i, item);
    return item;
  });
}
