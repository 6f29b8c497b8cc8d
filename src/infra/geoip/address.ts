import ipaddr from 'ipaddr.js';

/**
 * One parse of the looked-up address, shared by every reader. IPv4-mapped IPv6
 * (`::ffff:8.8.8.8`) becomes the IPv4 address: the data is keyed by IPv4 there, and the
 * MaxMind tree's ::ffff:0:0/96 alias would otherwise report a /120 "network".
 */
export type LookupAddress =
  | { version: 4; text: string; value: number }
  | { version: 6; text: string; hi: bigint; lo: bigint };

export function toLookupAddress(ip: string): LookupAddress | null {
  let parsed: ipaddr.IPv4 | ipaddr.IPv6;
  try {
    parsed = ipaddr.parse(ip);
  } catch {
    return null;
  }
  if (parsed.kind() === 'ipv6' && (parsed as ipaddr.IPv6).isIPv4MappedAddress()) {
    parsed = (parsed as ipaddr.IPv6).toIPv4Address();
  }
  if (parsed.kind() === 'ipv4') {
    const o = (parsed as ipaddr.IPv4).octets;
    const value = ((o[0]! << 24) | (o[1]! << 16) | (o[2]! << 8) | o[3]!) >>> 0;
    return { version: 4, text: parsed.toString(), value };
  }
  const v6 = parsed as ipaddr.IPv6;
  const p = v6.parts;
  const hi = (BigInt(p[0]! * 0x10000 + p[1]!) << 32n) | BigInt(p[2]! * 0x10000 + p[3]!);
  const lo = (BigInt(p[4]! * 0x10000 + p[5]!) << 32n) | BigInt(p[6]! * 0x10000 + p[7]!);
  // The zone id (fe80::1%eth0) means nothing to a database: drop it from the lookup key.
  v6.zoneId = undefined;
  return { version: 6, text: v6.toString(), hi, lo };
}

export function formatIPv4(value: number): string {
  return `${value >>> 24}.${(value >>> 16) & 0xff}.${(value >>> 8) & 0xff}.${value & 0xff}`;
}

export function formatIPv6(value: bigint): string {
  const parts: number[] = [];
  for (let shift = 112n; shift >= 0n; shift -= 16n) parts.push(Number((value >> shift) & 0xffffn));
  return new ipaddr.IPv6(parts).toString();
}

/** The network of `address/prefix`, as CIDR text. */
export function cidrOf(address: LookupAddress, prefix: number): string {
  if (address.version === 4) {
    const mask = prefix === 0 ? 0 : (0xffffffff << (32 - prefix)) >>> 0;
    return `${formatIPv4((address.value & mask) >>> 0)}/${prefix}`;
  }
  const value = (address.hi << 64n) | address.lo;
  const mask = prefix === 0 ? 0n : ((1n << 128n) - 1n) ^ ((1n << BigInt(128 - prefix)) - 1n);
  return `${formatIPv6(value & mask)}/${prefix}`;
}

/**
 * The largest CIDR block that holds `ip` and stays inside the inclusive range [start, end].
 * CSV ranges are not always CIDR-aligned (1.0.128.0-1.0.196.255); this is the honest
 * "network" for one address within such a range.
 */
export function largestCidrInRangeV4(ip: number, start: number, end: number): string {
  // No block inside the range can be shorter than the prefix start and end share.
  for (let prefix = Math.clz32((start ^ end) >>> 0); prefix <= 32; prefix++) {
    const mask = prefix === 0 ? 0 : (0xffffffff << (32 - prefix)) >>> 0;
    const net = (ip & mask) >>> 0;
    const last = (net | (~mask >>> 0)) >>> 0;
    if (net >= start && last <= end) return `${formatIPv4(net)}/${prefix}`;
  }
  return `${formatIPv4(ip)}/32`;
}

const ALL_ONES_128 = (1n << 128n) - 1n;

export function largestCidrInRangeV6(ip: bigint, start: bigint, end: bigint): string {
  const differing = start ^ end;
  // Most ranges are one CIDR block, so this usually finishes on the first try.
  for (let prefix = differing === 0n ? 128 : 128 - differing.toString(2).length; prefix <= 128; prefix++) {
    const hostBits = (1n << BigInt(128 - prefix)) - 1n;
    const net = ip & (ALL_ONES_128 ^ hostBits);
    if (net >= start && (net | hostBits) <= end) return `${formatIPv6(net)}/${prefix}`;
  }
  return `${formatIPv6(ip)}/128`;
}
