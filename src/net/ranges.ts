import ipaddr from 'ipaddr.js';
import { parseIpStrict } from './ip-text.js';

/**
 * The one table of special address ranges. The target policy refuses every type but `public`;
 * IP lookup reports the type as is. Built from the IANA IPv4 and IPv6 special-purpose address
 * registries and the IPv6 address space registry; the most specific entry wins.
 */

export type AddressType =
  | 'public'
  | 'private'
  | 'loopback'
  | 'link_local'
  | 'unique_local'
  | 'cgnat'
  | 'multicast'
  | 'documentation'
  | 'benchmarking'
  | 'unspecified'
  | 'broadcast'
  | 'reserved';

export interface Classification {
  type: AddressType;
  /** CIDR of the matched entry, or '' for public. */
  range: string;
  /** The effective address: the embedded IPv4 when that is what decided, else the address itself. */
  ip: string;
}

type Addr = ipaddr.IPv4 | ipaddr.IPv6;

/**
 * Where an IPv6 prefix carries an IPv4 address whose own class matters. `fallback` is the type
 * when the embedded IPv4 is public.
 */
type Embedding = {
  extract: (parts: number[]) => ipaddr.IPv4[];
  fallback: AddressType;
  /** The packet really goes to the IPv4 (mapped addresses), so that is the effective address. */
  sameHost: boolean;
};

interface Entry {
  cidr: string;
  type: AddressType;
  why: string;
  embedded?: Embedding;
}

const v4From = (hi: number, lo: number): ipaddr.IPv4 => new ipaddr.IPv4([hi >> 8, hi & 0xff, lo >> 8, lo & 0xff]);
const lastV4 = (parts: number[]): ipaddr.IPv4[] => [v4From(parts[6]!, parts[7]!)];

const IPV4_TABLE: Entry[] = [
  { cidr: '0.0.0.0/8', type: 'unspecified', why: 'RFC 791 "this network"; Linux connects 0.0.0.0 to itself' },
  { cidr: '10.0.0.0/8', type: 'private', why: 'RFC 1918' },
  { cidr: '100.64.0.0/10', type: 'cgnat', why: 'RFC 6598 shared address space' },
  { cidr: '127.0.0.0/8', type: 'loopback', why: 'RFC 1122' },
  { cidr: '169.254.0.0/16', type: 'link_local', why: 'RFC 3927; includes cloud metadata 169.254.169.254' },
  { cidr: '172.16.0.0/12', type: 'private', why: 'RFC 1918' },
  { cidr: '192.0.0.0/24', type: 'reserved', why: 'RFC 6890 IETF protocol assignments (DS-Lite, NAT64 discovery, ...)' },
  // Carved out of 192.0.0.0/24 as globally reachable by IANA.
  { cidr: '192.0.0.9/32', type: 'public', why: 'RFC 7723 PCP anycast' },
  { cidr: '192.0.0.10/32', type: 'public', why: 'RFC 8155 TURN anycast' },
  { cidr: '192.0.2.0/24', type: 'documentation', why: 'RFC 5737 TEST-NET-1' },
  { cidr: '192.88.99.0/24', type: 'reserved', why: 'RFC 7526 deprecated 6to4 relay anycast' },
  { cidr: '192.168.0.0/16', type: 'private', why: 'RFC 1918' },
  { cidr: '198.18.0.0/15', type: 'benchmarking', why: 'RFC 2544' },
  { cidr: '198.51.100.0/24', type: 'documentation', why: 'RFC 5737 TEST-NET-2' },
  { cidr: '203.0.113.0/24', type: 'documentation', why: 'RFC 5737 TEST-NET-3' },
  { cidr: '224.0.0.0/4', type: 'multicast', why: 'RFC 5771' },
  { cidr: '233.252.0.0/24', type: 'documentation', why: 'RFC 6676 MCAST-TEST-NET' },
  { cidr: '240.0.0.0/4', type: 'reserved', why: 'RFC 1112 future use' },
  { cidr: '255.255.255.255/32', type: 'broadcast', why: 'RFC 919 limited broadcast' },
];

const IPV6_TABLE: Entry[] = [
  { cidr: '::/128', type: 'unspecified', why: 'RFC 4291' },
  { cidr: '::1/128', type: 'loopback', why: 'RFC 4291' },
  {
    cidr: '::ffff:0:0/96',
    type: 'reserved',
    why: 'RFC 4291 IPv4-mapped: the socket talks IPv4 to the embedded address',
    embedded: { extract: lastV4, fallback: 'public', sameHost: true },
  },
  {
    cidr: '::/96',
    type: 'reserved',
    why: 'RFC 4291 deprecated IPv4-compatible',
    embedded: { extract: lastV4, fallback: 'reserved', sameHost: false },
  },
  {
    cidr: '64:ff9b::/96',
    type: 'reserved',
    why: 'RFC 6052 NAT64 well-known prefix',
    embedded: { extract: lastV4, fallback: 'public', sameHost: false },
  },
  {
    // Operators may embed at other RFC 6052 offsets; the /96 layout is the one DNS64 uses in practice.
    cidr: '64:ff9b:1::/48',
    type: 'reserved',
    why: 'RFC 8215 local-use NAT64',
    embedded: { extract: lastV4, fallback: 'public', sameHost: false },
  },
  { cidr: '100::/64', type: 'reserved', why: 'RFC 6666 discard-only' },
  { cidr: '2001::/23', type: 'reserved', why: 'RFC 2928 IETF protocol assignments' },
  {
    cidr: '2001::/32',
    type: 'reserved',
    why: 'RFC 4380 Teredo: server IPv4 in bits 32-63, client IPv4 inverted in bits 96-127',
    embedded: {
      extract: (p) => [v4From(p[6]! ^ 0xffff, p[7]! ^ 0xffff), v4From(p[2]!, p[3]!)],
      fallback: 'public',
      sameHost: false,
    },
  },
  // Carved out of 2001::/23 as globally reachable by IANA.
  { cidr: '2001:1::1/128', type: 'public', why: 'RFC 7723 PCP anycast' },
  { cidr: '2001:1::2/128', type: 'public', why: 'RFC 8155 TURN anycast' },
  { cidr: '2001:3::/32', type: 'public', why: 'RFC 7450 AMT' },
  { cidr: '2001:4:112::/48', type: 'public', why: 'RFC 7535 AS112-v6' },
  { cidr: '2001:2::/48', type: 'benchmarking', why: 'RFC 5180' },
  { cidr: '2001:db8::/32', type: 'documentation', why: 'RFC 3849' },
  {
    cidr: '2002::/16',
    type: 'reserved',
    why: 'RFC 3056 6to4: IPv4 in bits 16-47',
    embedded: { extract: (p) => [v4From(p[1]!, p[2]!)], fallback: 'public', sameHost: false },
  },
  { cidr: '3fff::/20', type: 'documentation', why: 'RFC 9637' },
  { cidr: '5f00::/16', type: 'reserved', why: 'RFC 9602 SRv6 SIDs' },
  { cidr: 'fc00::/7', type: 'unique_local', why: 'RFC 4193' },
  { cidr: 'fe80::/10', type: 'link_local', why: 'RFC 4291' },
  { cidr: 'fec0::/10', type: 'reserved', why: 'RFC 3879 deprecated site-local' },
  { cidr: 'ff00::/8', type: 'multicast', why: 'RFC 4291' },
  // Everything outside 2000::/3 is unassigned IETF space (IANA IPv6 address space registry);
  // listed block by block so the reported range is the real one.
  ...['::/8', '100::/8', '200::/7', '400::/6', '800::/5', '1000::/4', '4000::/3', '6000::/3', '8000::/3']
    .concat(['a000::/3', 'c000::/3', 'e000::/4', 'f000::/5', 'f800::/6', 'fe00::/9'])
    .map((cidr): Entry => ({ cidr, type: 'reserved', why: 'IANA: reserved by the IETF' })),
];

interface Compiled<A extends Addr> {
  net: A;
  bits: number;
  entry: Entry;
}

function compile<A extends Addr>(table: Entry[], parse: (s: string) => [A, number]): Compiled<A>[] {
  return table
    .map((entry) => {
      const [net, bits] = parse(entry.cidr);
      return { net, bits, entry };
    })
    .sort((a, b) => b.bits - a.bits);
}

const V4 = compile(IPV4_TABLE, (s) => ipaddr.IPv4.parseCIDR(s));
const V6 = compile(IPV6_TABLE, (s) => ipaddr.IPv6.parseCIDR(s));

function longestMatch<A extends Addr>(addr: A, table: Compiled<A>[]): Compiled<A> | undefined {
  return table.find((c) => addr.match(c.net, c.bits));
}

function classifyV4(addr: ipaddr.IPv4): Classification {
  const hit = longestMatch(addr, V4);
  const ip = addr.toString();
  if (!hit || hit.entry.type === 'public') return { type: 'public', range: '', ip };
  return { type: hit.entry.type, range: hit.entry.cidr, ip };
}

function classifyV6(addr: ipaddr.IPv6): Classification {
  // The zone only names an interface; it does not change the class.
  const ip = new ipaddr.IPv6(addr.parts).toString();
  const hit = longestMatch(addr, V6);
  if (!hit || hit.entry.type === 'public') return { type: 'public', range: '', ip };
  const embedded = hit.entry.embedded;
  if (!embedded) return { type: hit.entry.type, range: hit.entry.cidr, ip };

  const inner = embedded.extract(addr.parts).map(classifyV4);
  const special = inner.find((c) => c.type !== 'public');
  if (special) return special;
  if (embedded.fallback === 'public') {
    return { type: 'public', range: '', ip: embedded.sameHost ? inner[0]!.ip : ip };
  }
  return { type: embedded.fallback, range: hit.entry.cidr, ip };
}

export function classifyAddress(addr: ipaddr.IPv4 | ipaddr.IPv6): Classification {
  return addr.kind() === 'ipv4' ? classifyV4(addr as ipaddr.IPv4) : classifyV6(addr as ipaddr.IPv6);
}

/** The first and last address of the block `network`/`bits` (the address itself for a whole one). */
export function blockEnds(network: Addr, bits: number): [Addr, Addr] {
  const bytes = network.toByteArray();
  const first = bytes.map((b, i) => b & prefixMask(bits - 8 * i));
  const last = first.map((b, i) => b | (~prefixMask(bits - 8 * i) & 0xff));
  return [ipaddr.fromByteArray(first), ipaddr.fromByteArray(last)];
}

/** The mask of a byte that keeps its first `bits` bits (none below 0, all from 8). */
function prefixMask(bits: number): number {
  return bits <= 0 ? 0 : bits >= 8 ? 0xff : (0xff << (8 - bits)) & 0xff;
}

/**
 * The class of a whole address block (a reverse zone's): a whole address's own; for a shorter
 * block, the special range it lies wholly in, told by its first and last addresses falling in the
 * same one (`168.192.in-addr.arpa`, `d.f.ip6.arpa`; carve-outs inside it do not make it public).
 * A block that spans public space or several ranges (`172.0.0.0/8`, `0.0.0.0/0`) is public.
 */
export function classifyBlock(network: Addr, bits: number): Classification {
  const [first, last] = blockEnds(network, bits);
  const c = classifyAddress(first);
  if (c.type === 'public' || first.toString() === last.toString()) return c;
  const end = classifyAddress(last);
  return end.type === c.type && end.range === c.range ? c : { type: 'public', range: '', ip: first.toString() };
}

/**
 * Classifies a dotted-quad IPv4 or an RFC 4291 IPv6 address (zone id allowed).
 * Throws a TypeError on anything else; callers validate user input first.
 */
export function classifyIp(ip: string): Classification {
  const addr = parseIpStrict(ip);
  if (addr === null) throw new TypeError(`not an IP address: ${JSON.stringify(ip)}`);
  return classifyAddress(addr);
}

/** The table as data, for documentation and for tests that check every entry. */
export const SPECIAL_RANGES: ReadonlyArray<{ cidr: string; type: AddressType; why: string }> = [
  ...IPV4_TABLE,
  ...IPV6_TABLE,
].map(({ cidr, type, why }) => ({ cidr, type, why }));
