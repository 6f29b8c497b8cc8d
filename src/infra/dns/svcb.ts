/**
 * SVCB and HTTPS records (RFC 9460), which dns-packet 5 does not know: it hands their RDATA over
 * as a Buffer (type "UNKNOWN_64" / "UNKNOWN_65"), decoded here. One pass over at most 65,535
 * bytes, every length checked against what is left: a malformed RDATA is null, never a throw
 * and never a read past its end. Values are written as dig (BIND 9.18) prints them, so the two
 * can be compared; the surrounding quotes are left out.
 */

import { DNS_MAX_LABEL_LENGTH, DNS_MAX_NAME_LENGTH } from '../../net/bounds.js';

/** The SvcParamKeys dig names (RFC 9460 14.3.2, and dohpath of RFC 9461, ohttp of RFC 9540). */
const KEY_NAMES: readonly string[] = ['mandatory', 'alpn', 'no-default-alpn', 'port', 'ipv4hint', 'ech', 'ipv6hint', 'dohpath', 'ohttp'];

/** The name dig gives a key: its mnemonic, or "key" and its number (RFC 9460 2.1). */
export function svcParamKeyName(key: number): string {
  return KEY_NAMES[key] ?? `key${key}`;
}

export interface SvcbData {
  priority: number;
  target: string;
  params: Record<string, string>;
}

/**
 * Bytes of a character-string as dig writes them in quotes: printable ASCII as is, '"' and '\'
 * escaped, anything else as \DDD (RFC 1035 5.1). An item of a value list (alpn) is escaped once
 * for the list, then once for the string (RFC 9460 A.1): "\\," and "\\\\"; dig also writes
 * its spaces as \032.
 */
function escapeText(bytes: Uint8Array, listItem = false): string {
  let out = '';
  for (const b of bytes) {
    const c = String.fromCharCode(b);
    if (b < 0x20 || b > 0x7e || (listItem && b === 0x20)) out += `\\${b.toString().padStart(3, '0')}`;
    else if (c === '\\') out += listItem ? '\\\\\\\\' : '\\\\';
    else if (c === '"') out += '\\"';
    else if (listItem && c === ',') out += '\\\\,';
    else out += c;
  }
  return out;
}

/** Characters a name's label writes with a backslash (BIND's dns_name_totext). */
const NAME_SPECIALS = new Set(['"', '(', ')', '.', ';', '\\', '@', '$']);

/** One label as dig writes it in a name. */
function escapeLabel(bytes: Uint8Array): string {
  let out = '';
  for (const b of bytes) {
    const c = String.fromCharCode(b);
    if (b <= 0x20 || b > 0x7e) out += `\\${b.toString().padStart(3, '0')}`;
    else if (NAME_SPECIALS.has(c)) out += `\\${c}`;
    else out += c;
  }
  return out;
}

/** The uncompressed target name at `offset` (RFC 9460 2.2 forbids compression), or null when malformed. */
function readName(buf: Buffer, offset: number): { name: string; next: number } | null {
  const labels: string[] = [];
  let o = offset;
  let total = 0;
  for (;;) {
    if (o >= buf.length) return null;
    const len = buf[o++]!;
    if (len === 0) break;
    // A compression pointer or a reserved label type.
    if (len > DNS_MAX_LABEL_LENGTH || o + len > buf.length) return null;
    total += len + 1;
    // Length-prefixed labels of a name at most DNS_MAX_NAME_LENGTH characters as text (one more
    // octet on the wire than the text, the root's zero byte aside).
    if (total > DNS_MAX_NAME_LENGTH + 1) return null;
    labels.push(escapeLabel(buf.subarray(o, o + len)));
    o += len;
  }
  return { name: labels.length === 0 ? '.' : labels.join('.'), next: o };
}

function ipv4List(value: Buffer): string | null {
  if (value.length === 0 || value.length % 4 !== 0) return null;
  const out: string[] = [];
  for (let i = 0; i < value.length; i += 4) out.push(`${value[i]}.${value[i + 1]}.${value[i + 2]}.${value[i + 3]}`);
  return out.join(',');
}

/** An IPv6 address as dig writes it: RFC 5952, longest run of zero groups shortened. */
function ipv6Text(b: Buffer): string {
  const groups: number[] = [];
  for (let i = 0; i < 16; i += 2) groups.push(b.readUInt16BE(i));
  let bestStart = -1;
  let bestLen = 1;
  for (let i = 0; i < 8; ) {
    if (groups[i] !== 0) {
      i++;
      continue;
    }
    let j = i;
    while (j < 8 && groups[j] === 0) j++;
    if (j - i > bestLen) {
      bestStart = i;
      bestLen = j - i;
    }
    i = j;
  }
  const hex = groups.map((g) => g.toString(16));
  if (bestStart < 0) return hex.join(':');
  return `${hex.slice(0, bestStart).join(':')}::${hex.slice(bestStart + bestLen).join(':')}`;
}

function ipv6List(value: Buffer): string | null {
  if (value.length === 0 || value.length % 16 !== 0) return null;
  const out: string[] = [];
  for (let i = 0; i < value.length; i += 16) out.push(ipv6Text(value.subarray(i, i + 16)));
  return out.join(',');
}

function alpnList(value: Buffer): string | null {
  const out: string[] = [];
  let o = 0;
  while (o < value.length) {
    const len = value[o++]!;
    if (len === 0 || o + len > value.length) return null;
    out.push(escapeText(value.subarray(o, o + len), true));
    o += len;
  }
  return out.length === 0 ? null : out.join(',');
}

function mandatoryList(value: Buffer): string | null {
  if (value.length === 0 || value.length % 2 !== 0) return null;
  const out: string[] = [];
  for (let i = 0; i < value.length; i += 2) out.push(svcParamKeyName(value.readUInt16BE(i)));
  return out.join(',');
}

/** One SvcParam's value in dig's words; null when its wire form is not the key's (dig then prints it as an unknown key's). */
function paramValue(key: number, value: Buffer): string | null {
  switch (key) {
    case 0:
      return mandatoryList(value);
    case 1:
      return alpnList(value);
    case 2:
    case 8:
      return value.length === 0 ? '' : null;
    case 3:
      return value.length === 2 ? String(value.readUInt16BE(0)) : null;
    case 4:
      return ipv4List(value);
    case 5:
      return value.length === 0 ? null : value.toString('base64');
    case 6:
      return ipv6List(value);
    case 7:
      return value.length === 0 ? null : escapeText(value);
    default:
      return escapeText(value);
  }
}

/**
 * The RDATA of an SVCB or HTTPS record, or null when it is malformed (a truncated field, a
 * compressed or overlong target, keys out of order: RFC 9460 2.2 requires strictly increasing).
 */
export function decodeSvcb(rdata: Buffer): SvcbData | null {
  if (rdata.length < 3) return null;
  const priority = rdata.readUInt16BE(0);
  const name = readName(rdata, 2);
  if (name === null) return null;
  // Keys are mnemonics or "key" and a number: never a name an object inherits.
  const params: Record<string, string> = {};
  let o = name.next;
  let lastKey = -1;
  while (o < rdata.length) {
    if (o + 4 > rdata.length) return null;
    const key = rdata.readUInt16BE(o);
    const len = rdata.readUInt16BE(o + 2);
    o += 4;
    if (key <= lastKey || o + len > rdata.length) return null;
    lastKey = key;
    const value = paramValue(key, rdata.subarray(o, o + len));
    if (value === null) return null;
    params[svcParamKeyName(key)] = value;
    o += len;
  }
  return { priority, target: name.name, params };
}
