import type ipaddr from 'ipaddr.js';
import { isSpecialReverseName, reverseName, reversedLabels } from '../dns/names.js';
import { DNSBL_ERROR_PREFIX, DNSBL_POLICY_ANSWERS, DNSBL_PROXY_ANSWERS } from './defaults.js';
import type { BlacklistResult, DnsQuerier } from './types.js';
import { withDeadline } from '../../lib/deadline.js';

type DnsResult = Awaited<ReturnType<DnsQuerier['query']>>;

/**
 * Asks and gives up after `deadlineMs`: null then, or when the client throws. The client's own
 * per-attempt timeout is set to half the deadline (it retries once on the next server), and the
 * race makes the deadline hold whatever the client does.
 */
async function queryWithin(dns: DnsQuerier, name: string, type: 'A' | 'PTR', deadlineMs: number): Promise<DnsResult | null> {
  const query = dns.query(name, type, { timeoutMs: Math.max(1, Math.floor(deadlineMs / 2)) }).catch(() => null);
  return withDeadline(query, deadlineMs, () => null);
}

function addressesOf(result: DnsResult): string[] {
  return result.records.map((r) => r.address).filter((a): a is string => typeof a === 'string');
}

/** First PTR name without the trailing dot, or null (none, NXDOMAIN, timeout). */
export async function lookupPtr(dns: DnsQuerier, addr: ipaddr.IPv4 | ipaddr.IPv6, deadlineMs: number): Promise<string | null> {
  const result = await queryWithin(dns, reverseName(addr), 'PTR', deadlineMs);
  if (!result || result.status !== 'NOERROR') return null;
  // A public address's reverse zone may lead (CNAME) into a private one, which the resolver answers for.
  if (result.aliases?.some(isSpecialReverseName)) return null;
  const name = result.records.map((r) => r.value).find((v): v is string => typeof v === 'string' && v.length > 0);
  return name ? name.replace(/\.$/, '') : null;
}

const isLoopbackAnswer = (a: string): boolean => a.startsWith('127.');

/**
 * Tor exit? 127/8 answers other than 127.0.0.1 mean yes (TorDNSEL), NXDOMAIN or no data means
 * no, anything else (timeout, SERVFAIL, a rewritten answer outside 127/8) is unknown.
 */
export async function checkTorExit(
  dns: DnsQuerier,
  addr: ipaddr.IPv4 | ipaddr.IPv6,
  zone: string,
  deadlineMs: number,
): Promise<boolean | null> {
  if (addr.kind() !== 'ipv4') return null;
  const result = await queryWithin(dns, `${reversedLabels(addr)}.${zone}`, 'A', deadlineMs);
  if (!result) return null;
  if (result.status === 'NXDOMAIN') return false;
  if (result.status !== 'NOERROR') return null;
  const answers = addressesOf(result);
  if (answers.length === 0) return false;
  const meaningful = answers.filter((a) => isLoopbackAnswer(a) && a !== '127.0.0.1');
  return meaningful.length > 0 ? true : null;
}

export interface DnsblOutcome extends BlacklistResult {
  /** Listed on a zone/answer that means "open proxy" (see DNSBL_PROXY_ANSWERS). */
  proxy: boolean;
}

/**
 * One DNSBL (RFC 5782): an A answer in 127.0.0.0/8 means listed, NXDOMAIN (or no data) means
 * not listed. Answers outside 127/8 (an NXDOMAIN-rewriting resolver) and Spamhaus's error
 * codes 127.255.255.x are not listings: unknown. Policy-only answers (Spamhaus PBL) are
 * reported in `response` but not as a listing.
 */
export async function checkDnsbl(
  dns: DnsQuerier,
  addr: ipaddr.IPv4 | ipaddr.IPv6,
  zone: string,
  deadlineMs: number,
): Promise<DnsblOutcome> {
  const list = zone.replace(/\.$/, '').toLowerCase();
  const result = await queryWithin(dns, `${reversedLabels(addr)}.${list}`, 'A', deadlineMs);
  if (!result) return { list, listed: null, response: [], proxy: false };
  if (result.status === 'NXDOMAIN') return { list, listed: false, response: [], proxy: false };
  if (result.status !== 'NOERROR') return { list, listed: null, response: [], proxy: false };
  const response = addressesOf(result);
  if (response.length === 0) return { list, listed: false, response, proxy: false };
  const codes = response.filter((a) => isLoopbackAnswer(a) && !a.startsWith(DNSBL_ERROR_PREFIX));
  if (codes.length === 0) return { list, listed: null, response, proxy: false };
  const policy = DNSBL_POLICY_ANSWERS[list] ?? [];
  const abuse = codes.filter((a) => !policy.includes(a));
  const proxyCodes = DNSBL_PROXY_ANSWERS[list];
  const proxy = abuse.length > 0 && proxyCodes !== undefined && (proxyCodes === '*' || abuse.some((a) => proxyCodes.includes(a)));
  return { list, listed: abuse.length > 0, response, proxy };
}
