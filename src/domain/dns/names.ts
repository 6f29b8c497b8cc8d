import net from 'node:net';
import { domainToASCII } from 'node:url';
import ipaddr from 'ipaddr.js';
import { ValidationError } from '../../errors.js';
import { DNS_MAX_LABEL_LENGTH, DNS_MAX_NAME_LENGTH } from '../../net/bounds.js';
import { DNS_RECORD_TYPES, isDnsRecordType, type DnsRecordType } from './client.js';
import { DNS_DEFAULT_TYPE } from './defaults.js';
import { hostMistake } from '../../net/target.js';
import { classifyBlock } from '../../net/ranges.js';
const LABEL = /^[a-z0-9_](?:[a-z0-9_-]*[a-z0-9_])?$/;
/**
 * ASCII characters that can appear in a name before IDN conversion. Anything else (space, '/',
 * '@', ':', '%', ...) would make domainToASCII read the input as a URL and silently cut or
 * decode it ("a/b.com" -> "a"), so it is refused up front.
 */
const ASCII_NAME_CHARS = /^[A-Za-z0-9._-]*$/;

export interface NormalizeOptions {
  /** The field named in validation errors ("domain", "domains[3]"). */
  field?: string;
  /** Underscore labels (_dmarc, _sip._tcp) are service names, not host names. Default true. */
  allowUnderscore?: boolean;
  /** Fewest labels accepted: 2 for WHOIS ("example.com"), 1 for DNS (a TLD's NS is a fair question). */
  minLabels?: number;
}

/**
 * A user's domain as the ASCII name to query: trimmed, one trailing dot dropped, IDN to punycode,
 * lowercase. Throws ValidationError naming the field and what is wrong.
 */
export function normalizeDomain(input: string, opts: NormalizeOptions = {}): string {
  const field = opts.field ?? 'domain';
  const allowUnderscore = opts.allowUnderscore ?? true;
  let name = input.trim();
  if (name.endsWith('.') && !name.endsWith('..')) name = name.slice(0, -1);
  if (name.length === 0) throw new ValidationError(field, 'must not be empty');

  const mistake = hostMistake(name, 'domain');
  if (mistake !== undefined) throw new ValidationError(field, mistake);

  const nonIdnPart = name.replace(/[^\x00-\x7f]/g, '');
  if (!ASCII_NAME_CHARS.test(nonIdnPart)) {
    const bad = [...nonIdnPart].find((c) => !/[A-Za-z0-9._-]/.test(c)) ?? '';
    throw new ValidationError(
      field,
      `must be a domain name: ${JSON.stringify(bad)} is not allowed (letters, digits, hyphens and dots only)`,
    );
  }
  // Also lowercases, maps IDN dots (U+3002 ...) and rejects broken punycode ("xn--zz").
  const ascii = domainToASCII(name);
  if (ascii === '') throw new ValidationError(field, 'is not a valid internationalised domain name');

  if (ascii.length > DNS_MAX_NAME_LENGTH) throw new ValidationError(field, `must be at most ${DNS_MAX_NAME_LENGTH} characters`);
  const labels = ascii.split('.');
  for (const label of labels) {
    if (label.length === 0) throw new ValidationError(field, 'must not contain an empty label (two dots in a row, or a leading dot)');
    if (label.length > DNS_MAX_LABEL_LENGTH) {
      throw new ValidationError(field, `label "${label.slice(0, 20)}…" is longer than ${DNS_MAX_LABEL_LENGTH} characters`);
    }
    if (label.startsWith('-') || label.endsWith('-')) {
      throw new ValidationError(field, `label "${label}" must not start or end with a hyphen`);
    }
    if (!allowUnderscore && label.includes('_')) {
      throw new ValidationError(field, `label "${label}" must not contain an underscore`);
    }
    if (!LABEL.test(label)) {
      const allowed = allowUnderscore ? 'letters, digits, hyphens and underscores' : 'letters, digits and hyphens';
      throw new ValidationError(field, `label "${label}" may contain only ${allowed}`);
    }
  }
  if (/^\d+$/.test(labels[labels.length - 1]!)) {
    throw new ValidationError(field, 'must be a domain name, not an IP address (use type PTR for reverse lookups)');
  }
  if (labels.length < (opts.minLabels ?? 1)) {
    throw new ValidationError(field, 'must be a registrable domain name such as example.com');
  }
  return ascii;
}

/** An address's labels in reverse-lookup order: `4.3.2.1` for 1.2.3.4, 32 nibbles for IPv6 (RFC 3596, RFC 5782 section 2.4). */
export function reversedLabels(addr: ipaddr.IPv4 | ipaddr.IPv6): string {
  if (addr.kind() === 'ipv4') return (addr as ipaddr.IPv4).octets.slice().reverse().join('.');
  const hex = (addr as ipaddr.IPv6).toByteArray().map((b) => b.toString(16).padStart(2, '0')).join('');
  return [...hex].reverse().join('.');
}

/** The reverse-lookup name of an IP address: 192.0.2.1 -> 1.2.0.192.in-addr.arpa, IPv6 by nibble. */
export function reverseName(ip: string | ipaddr.IPv4 | ipaddr.IPv6): string {
  const addr = typeof ip === 'string' ? ipaddr.parse(ip) : ip;
  return `${reversedLabels(addr)}.${addr.kind() === 'ipv4' ? 'in-addr.arpa' : 'ip6.arpa'}`;
}

/** A strict IP literal (no "127.1" or "0x7f.1"), zone id dropped; null when the input is not one. */
export function ipLiteral(input: string): string | null {
  const bare = input.trim().replace(/^\[(.*)\]$/, '$1');
  const zone = bare.indexOf('%');
  const value = zone < 0 ? bare : bare.slice(0, zone);
  return net.isIP(value) === 0 ? null : value;
}

/** The record type, case-insensitively; absent means DNS_DEFAULT_TYPE. */
export function parseRecordType(input: string | undefined, field = 'type'): DnsRecordType {
  if (input === undefined) return DNS_DEFAULT_TYPE;
  const upper = input.trim().toUpperCase();
  if (!isDnsRecordType(upper)) throw new ValidationError(field, `must be one of ${DNS_RECORD_TYPES.join(', ')}`);
  return upper;
}

/**
 * The name to query for a lookup: for PTR an IP address becomes its reverse name; anything else
 * is normalised as a domain.
 */
export function queryName(input: string, type: DnsRecordType, field = 'domain'): string {
  if (type === 'PTR') {
    const ip = ipLiteral(input);
    if (ip !== null) return reverseName(ip);
  }
  return normalizeDomain(input, { field });
}

/** The reverse-mapping zones (RFC 1035 section 3.5, RFC 3596 section 2.5), as normalised names end. */
const IN_ADDR_ARPA = 'in-addr.arpa';
const IP6_ARPA = 'ip6.arpa';
/** A label that names an IPv4 octet in `in-addr.arpa`: decimal, no leading zero, as the zones spell it. */
const REVERSE_OCTET = /^(25[0-5]|2[0-4]\d|1\d\d|[1-9]\d|\d)$/;
/** A label that names an IPv6 nibble in `ip6.arpa`. */
const REVERSE_NIBBLE = /^[0-9a-f]$/;

/** The address block a reverse name lies under: `network` (host bits zero) and its prefix length. */
export interface ReverseNetwork {
  network: ipaddr.IPv4 | ipaddr.IPv6;
  bits: number;
}

/**
 * The address block whose reverse zone holds `name` (a normalised name: lowercase, no trailing
 * dot), or null when it is not under `in-addr.arpa` or `ip6.arpa`. The labels left of the zone
 * are read from the right as long as each names the next octet (nibble): `9.9.9.10.in-addr.arpa`
 * is 10.9.9.9/32, `168.192.in-addr.arpa` 192.168.0.0/16, and a name with more labels
 * (`x.9.10.in-addr.arpa`, RFC 2317's `1.0-25.2.0.192.in-addr.arpa`) lies in the zone of the block
 * read so far. `in-addr.arpa` itself is 0.0.0.0/0.
 */
export function reverseNetwork(name: string): ReverseNetwork | null {
  const v4 = name === IN_ADDR_ARPA || name.endsWith(`.${IN_ADDR_ARPA}`);
  if (!v4 && name !== IP6_ARPA && !name.endsWith(`.${IP6_ARPA}`)) return null;
  const zone = v4 ? IN_ADDR_ARPA : IP6_ARPA;
  const labels = name === zone ? [] : name.slice(0, -(zone.length + 1)).split('.');
  const [pattern, most, width] = v4 ? [REVERSE_OCTET, 4, 8] : [REVERSE_NIBBLE, 32, 4];
  const values: number[] = [];
  for (let i = labels.length - 1; i >= 0 && values.length < most; i--) {
    const label = labels[i]!;
    if (!pattern.test(label)) break;
    values.push(Number.parseInt(label, v4 ? 10 : 16));
  }
  const bits = values.length * width;
  if (v4) {
    const octets = [0, 0, 0, 0];
    values.forEach((v, i) => (octets[i] = v));
    return { network: new ipaddr.IPv4(octets), bits };
  }
  const parts = Array.from({ length: 8 }, () => 0);
  values.forEach((v, i) => (parts[i >> 2]! |= v << (12 - 4 * (i & 3))));
  return { network: new ipaddr.IPv6(parts), bits };
}

/**
 * A name in the reverse zone of a block that lies wholly in a special range (src/net/ranges.ts),
 * whatever the operator opted in: what a lookup that never asks about special addresses
 * (/ip/lookup's PTR) must not show either when an answer's CNAME leads there.
 */
export function isSpecialReverseName(name: string): boolean {
  const block = reverseNetwork(name);
  return block !== null && classifyBlock(block.network, block.bits).type !== 'public';
}
