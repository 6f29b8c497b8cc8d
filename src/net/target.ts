import ipaddr from 'ipaddr.js';
import { domainToASCII } from 'node:url';
import { ValidationError } from '../errors.js';
import { DNS_MAX_NAME_LENGTH } from './bounds.js';
import { endsInNumber, parseIpv4Loose, parseIpv6Text } from './ip-text.js';

/**
 * What a probe target string names: an address, or a hostname still to be resolved.
 * Every spelling another program might read as an address is read as that address here,
 * so the policy never checks something other than what a socket would reach.
 */
export type ParsedTarget =
  | { kind: 'ip'; address: ipaddr.IPv4 | ipaddr.IPv6 }
  | {
      kind: 'name';
      /** Lowercase A-label form without the trailing dot. */
      hostname: string;
      /** `localhost` and `*.localhost`: loopback by definition (RFC 6761), never sent to DNS. */
      localhost: boolean;
    };

/** Longer than any hostname can be even before IDN conversion; keeps error messages bounded. */
const MAX_TARGET_LENGTH = 1_000;
const LABEL = /^[a-z0-9](?:[a-z0-9-]{0,61}[a-z0-9])?$/;

const RULE = 'must be a hostname, an IPv4 address or an IPv6 address';

function show(input: string): string {
  return JSON.stringify(input.length > 80 ? `${input.slice(0, 80)}…` : input);
}

function ipv6(text: string, input: string, field: string): ParsedTarget {
  const parsed = parseIpv6Text(text);
  if (!parsed.ok) throw new ValidationError(field, `${show(input)} is not a valid IPv6 address: ${parsed.reason}`);
  const address = new ipaddr.IPv6(parsed.parts);
  if (parsed.zone !== null) address.zoneId = parsed.zone;
  return { kind: 'ip', address };
}

function ipv4(text: string, input: string, field: string): ParsedTarget {
  const octets = parseIpv4Loose(text);
  if (octets === null) {
    throw new ValidationError(field, `${show(input)} ends in a number but is not a valid IPv4 address`);
  }
  return { kind: 'ip', address: new ipaddr.IPv4(octets) };
}

const DIGITS = /^[0-9]+$/;

/**
 * The two mistakes a new user makes with a host field, answered for what they are rather than
 * as a broken IPv6 address: a URL ("http://example.com") and a host with its port
 * ("example.com:80", "[2001:db8::1]:443"). Undefined when the text is neither; then the usual
 * rules judge it. A DNS name (`kind` "domain") has no port field to point to.
 */
export function hostMistake(text: string, kind: 'host' | 'domain' = 'host'): string | undefined {
  const what = kind === 'host' ? 'a host name or IP address' : 'a domain name';
  const scheme = text.indexOf('://');
  if (scheme > 0) {
    let host = '';
    try {
      host = new URL(text).hostname;
    } catch {
      // not even a URL: the generic example below
    }
    const example = host === '' ? 'example.com, not http://example.com' : `${host}, not ${text.length > 80 ? `${text.slice(0, 80)}…` : text}`;
    return `give ${what}, not a URL (${example})`;
  }
  const close = text.startsWith('[') ? text.lastIndexOf(']:') : -1;
  const colon = text.indexOf(':');
  // One colon never makes an IPv6 address (it has at least two); "[v6]:port" is the bracket form.
  const port = close > 0 ? text.slice(close + 2) : colon > 0 && colon === text.lastIndexOf(':') ? text.slice(colon + 1) : undefined;
  if (port !== undefined && DIGITS.test(port)) {
    return kind === 'host' ? 'give the port in `port`/`ports`, not in the host' : 'give the domain name alone, without a port';
  }
  return undefined;
}

/**
 * Parses a probe target. Throws ValidationError naming `field` when the spelling is not a
 * hostname (RFC 1123, IDN allowed), an IPv4 address (any inet_aton form) or an IPv6 address
 * (brackets and zone id allowed).
 */
export function parseTarget(input: string, field = 'target'): ParsedTarget {
  if (typeof input !== 'string') throw new ValidationError(field, `${RULE}, as a string`);
  const text = input.trim();
  if (text.length === 0) throw new ValidationError(field, `must not be empty; ${RULE}`);
  if (text.length > MAX_TARGET_LENGTH) throw new ValidationError(field, `at most ${MAX_TARGET_LENGTH} characters`);
  const mistake = hostMistake(text);
  if (mistake !== undefined) throw new ValidationError(field, mistake);

  if (text.startsWith('[')) {
    if (!text.endsWith(']')) throw new ValidationError(field, `${show(input)} opens '[' without closing it`);
    return ipv6(text.slice(1, -1), input, field);
  }
  if (text.includes(':')) return ipv6(text, input, field);
  if (endsInNumber(text)) return ipv4(text, input, field);

  // UTS 46 mapping converts full-width digits and dots into ASCII, so the result may now be an
  // IPv4 spelling; it is checked again below.
  const ascii = domainToASCII(text.toLowerCase());
  if (ascii === '') throw new ValidationError(field, `${show(input)} is not a valid internationalised domain name`);
  if (ascii.includes(':')) throw new ValidationError(field, `${show(input)}: ${RULE}`);
  if (endsInNumber(ascii)) return ipv4(ascii, input, field);

  const hostname = ascii.endsWith('.') ? ascii.slice(0, -1) : ascii;
  if (hostname.length > DNS_MAX_NAME_LENGTH) {
    throw new ValidationError(field, `hostname is longer than ${DNS_MAX_NAME_LENGTH} characters`);
  }
  const bad = hostname.split('.').find((label) => !LABEL.test(label));
  if (bad !== undefined) {
    throw new ValidationError(
      field,
      `${show(input)}: ${RULE}; hostname labels are 1-63 letters, digits or inner hyphens` +
        (bad === '' ? ' (found an empty label)' : ` (found ${show(bad)})`),
    );
  }
  const localhost = hostname === 'localhost' || hostname.endsWith('.localhost');
  return { kind: 'name', hostname, localhost };
}
