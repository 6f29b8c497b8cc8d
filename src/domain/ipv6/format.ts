import ipaddr from 'ipaddr.js';
import { ValidationError } from '../../errors.js';
import { parseIpv6Text } from '../../net/ip-text.js';
import { classifyAddress, type AddressType } from '../../net/ranges.js';
import { IPV6_MAX_INPUT_LENGTH } from './defaults.js';

export interface Ipv6Validation {
  ipv6: string;
  valid: boolean;
  /** The address's range type; null when invalid. */
  type: AddressType | null;
  compressed: string | null;
  expanded: string | null;
  /** Why the address is invalid; null when valid. */
  reason: string | null;
}

export interface Ipv6Expansion {
  ipv6: string;
  /** Eight groups of four lowercase hex digits (an IPv4 tail becomes hex). */
  expanded: string;
  /** RFC 5952 canonical text. */
  compressed: string;
}

const DOTTED_QUAD = /^\d{1,3}(\.\d{1,3}){3}$/;

/** Eight groups of four lowercase hex digits. */
function expanded(parts: readonly number[]): string {
  return parts.map((p) => p.toString(16).padStart(4, '0')).join(':');
}

/**
 * RFC 5952 text, with (section 5) an IPv4-mapped address's IPv4 in dotted decimal, which
 * ipaddr.js leaves in hex. The address carries no zone; callers append it.
 */
function compressed(addr: ipaddr.IPv6): string {
  return addr.isIPv4MappedAddress() ? `::ffff:${addr.toIPv4Address().toString()}` : addr.toRFC5952String();
}

type Parsed = { ok: true; parts: number[]; zone: string | null } | { ok: false; reason: string };

function parse(input: string): Parsed {
  if (typeof input !== 'string') return { ok: false, reason: 'must be a string' };
  if (input.length === 0) return { ok: false, reason: 'empty: an IPv6 address looks like 2001:db8::1' };
  if (input.length > IPV6_MAX_INPUT_LENGTH) {
    return { ok: false, reason: `longer than ${IPV6_MAX_INPUT_LENGTH} characters` };
  }
  if (DOTTED_QUAD.test(input)) return { ok: false, reason: 'this is an IPv4 address, not IPv6' };
  return parseIpv6Text(input);
}

const withZone = (text: string, zone: string | null): string => (zone === null ? text : `${text}%${zone}`);

/** Never throws for a string: an invalid address is a valid answer with `reason` set. */
export function validate(ipv6: string): Ipv6Validation {
  const p = parse(ipv6);
  if (!p.ok) {
    return { ipv6, valid: false, type: null, compressed: null, expanded: null, reason: p.reason };
  }
  const addr = new ipaddr.IPv6(p.parts);
  return {
    ipv6,
    valid: true,
    type: classifyAddress(addr).type,
    compressed: withZone(compressed(addr), p.zone),
    expanded: withZone(expanded(p.parts), p.zone),
    reason: null,
  };
}

/** Throws ValidationError('ipv6') when the address is invalid. */
export function expand(ipv6: string): Ipv6Expansion {
  const p = parse(ipv6);
  if (!p.ok) throw new ValidationError('ipv6', `not a valid IPv6 address: ${p.reason}`);
  const addr = new ipaddr.IPv6(p.parts);
  return {
    ipv6,
    expanded: withZone(expanded(p.parts), p.zone),
    compressed: withZone(compressed(addr), p.zone),
  };
}
