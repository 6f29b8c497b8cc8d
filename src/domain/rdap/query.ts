import type ipaddr from 'ipaddr.js';
import { ValidationError } from '../../errors.js';
import { parseLookupIp } from '../ip/lookup.js';

export const ASN_RULE = 'must be an AS number 0-4294967295, as a number (15169) or a string ("15169", "AS15169")';
export const IP_RULE = 'must be an IPv4 or IPv6 address (e.g. 8.8.8.8, 2001:4860::8888)';

/** An AS number from 15169, "15169" or "AS15169" (any case); ValidationError otherwise. */
export function parseAsn(input: unknown, field = 'asn'): number {
  let n: number | null = null;
  if (typeof input === 'number') n = input;
  else if (typeof input === 'string') {
    const s = input.trim();
    const digits = s.slice(0, 2).toLowerCase() === 'as' ? s.slice(2) : s;
    if (/^\d{1,10}$/.test(digits)) n = Number(digits);
  }
  if (n === null || !Number.isInteger(n) || n < 0 || n > 0xffffffff) throw new ValidationError(field, ASN_RULE);
  return n;
}

/** An address (an IPv4-mapped IPv6 one as its IPv4, the zone id dropped, as /ip/lookup reads it); ValidationError otherwise. */
export function parseIpQuery(input: string, field = 'ip'): ipaddr.IPv4 | ipaddr.IPv6 {
  const addr = parseLookupIp(input);
  if (addr === null) throw new ValidationError(field, IP_RULE);
  return addr;
}

/** The one of `ip` and `asn` given; ValidationError naming the field when neither or both are. */
export function whoisQuery(body: { ip?: string | undefined; asn?: number | string | undefined }): { ip: ipaddr.IPv4 | ipaddr.IPv6 } | { asn: number } {
  if (body.ip !== undefined && body.asn !== undefined) throw new ValidationError('asn', 'give either ip or asn, not both');
  if (body.ip !== undefined) return { ip: parseIpQuery(body.ip) };
  if (body.asn !== undefined) return { asn: parseAsn(body.asn) };
  throw new ValidationError('ip', 'required: give ip (an IP address) or asn (an AS number)');
}
