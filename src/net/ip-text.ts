import ipaddr from 'ipaddr.js';

/**
 * Address spellings, parsed by our own grammar rather than ipaddr.js alone: the policy must
 * see exactly the address a socket would reach, and ipaddr.js is lenient in both directions
 * (it rejects inet_aton forms such as `0x7f.1` that other software accepts, and its IPv6
 * parser is looser than RFC 4291). The results are handed to ipaddr.js as plain numbers.
 */

export type Ipv6Parse =
  | { ok: true; parts: number[]; zone: string | null; ipv4Tail: boolean }
  | { ok: false; reason: string };

const HEX_GROUP = /^[0-9a-fA-F]{1,4}$/;
// RFC 4007 leaves zone syntax to the system; interface names and indexes fit this.
const ZONE = /^[0-9A-Za-z_.~-]{1,64}$/;
// RFC 3986 dec-octet: no leading zeros, so `01.2.3.4` cannot be read as octal by someone else.
const DEC_OCTET = /^(25[0-5]|2[0-4]\d|1\d\d|[1-9]\d|\d)$/;

/** Strict RFC 4291 section 2.2 text form, with an optional RFC 4007 `%zone`. No brackets. */
export function parseIpv6Text(input: string): Ipv6Parse {
  if (input.length === 0) return { ok: false, reason: 'empty string' };
  if (/\s/.test(input)) return { ok: false, reason: 'contains whitespace' };
  if (input.startsWith('[') || input.endsWith(']')) {
    return { ok: false, reason: 'brackets belong to URLs, not to the address; remove them' };
  }

  let text = input;
  let zone: string | null = null;
  const pct = input.indexOf('%');
  if (pct >= 0) {
    zone = input.slice(pct + 1);
    text = input.slice(0, pct);
    if (!ZONE.test(zone)) {
      return { ok: false, reason: `zone id "${zone}" must be 1-64 letters, digits, '.', '_', '~' or '-'` };
    }
  }
  if (text.length === 0) return { ok: false, reason: 'no address before the zone id' };
  if (text.includes(':::')) return { ok: false, reason: "':::' is not allowed; '::' stands for one or more zero groups" };

  const halves = text.split('::');
  if (halves.length > 2) return { ok: false, reason: "'::' may appear only once" };
  const compressed = halves.length === 2;

  const split = (s: string): string[] => (s === '' ? [] : s.split(':'));
  const head = split(halves[0]!);
  const tail = compressed ? split(halves[1]!) : [];
  const all = [...head, ...tail];
  if (all.length === 0 && !compressed) return { ok: false, reason: 'empty string' };

  // The dotted IPv4 tail may only be the very last piece.
  let ipv4: number[] | null = null;
  const last = all[all.length - 1];
  if (last !== undefined && last.includes('.')) {
    const octets = last.split('.');
    if (octets.length !== 4 || !octets.every((o) => DEC_OCTET.test(o))) {
      return {
        ok: false,
        reason: `IPv4 tail "${last}" must be four decimal octets 0-255 without leading zeros`,
      };
    }
    ipv4 = octets.map(Number);
  }

  const groupsOf = (pieces: string[], isTail: boolean): number[] | string => {
    const out: number[] = [];
    for (let i = 0; i < pieces.length; i++) {
      const g = pieces[i]!;
      if (ipv4 !== null && isTail === compressed && i === pieces.length - 1) continue;
      if (g === '') return "a single ':' cannot begin or end the address, and groups cannot be empty";
      if (g.includes('.')) return `IPv4 part "${g}" is only allowed as the last 32 bits`;
      if (g.length > 4) return `group "${g}" has more than 4 hex digits`;
      if (!HEX_GROUP.test(g)) {
        const bad = /[^0-9a-fA-F]/.exec(g)?.[0] ?? g;
        return `"${bad}" in group "${g}" is not a hexadecimal digit`;
      }
      out.push(parseInt(g, 16));
    }
    return out;
  };

  const headGroups = groupsOf(head, false);
  if (typeof headGroups === 'string') return { ok: false, reason: headGroups };
  const tailGroups = groupsOf(tail, true);
  if (typeof tailGroups === 'string') return { ok: false, reason: tailGroups };

  const ipv4Groups = ipv4 === null ? [] : [(ipv4[0]! << 8) | ipv4[1]!, (ipv4[2]! << 8) | ipv4[3]!];
  const explicit = headGroups.length + tailGroups.length + ipv4Groups.length;
  if (compressed) {
    if (explicit > 7) {
      return { ok: false, reason: `too many groups for '::' (${explicit} written, '::' must stand for at least one)` };
    }
    const zeros = new Array<number>(8 - explicit).fill(0);
    return { ok: true, parts: [...headGroups, ...zeros, ...tailGroups, ...ipv4Groups], zone, ipv4Tail: ipv4 !== null };
  }
  if (explicit !== 8) {
    return {
      ok: false,
      reason:
        explicit > 8
          ? `too many groups (${explicit}; an address has 8)`
          : `too few groups (${explicit} of 8) and no '::' to stand for the rest`,
    };
  }
  return { ok: true, parts: [...headGroups, ...ipv4Groups], zone, ipv4Tail: ipv4 !== null };
}

/** True when the last label is a number, so the whole string must be an IPv4 (WHATWG URL rule). */
export function endsInNumber(host: string): boolean {
  const labels = host.split('.');
  if (labels[labels.length - 1] === '' && labels.length > 1) labels.pop();
  const last = labels[labels.length - 1] ?? '';
  return /^\d+$/.test(last) || /^0[xX][0-9a-fA-F]*$/.test(last);
}

function inetAtonPart(part: string): number | null {
  if (/^0[xX][0-9a-fA-F]*$/.test(part)) return part.length === 2 ? 0 : parseInt(part.slice(2), 16);
  if (/^0[0-7]+$/.test(part)) return parseInt(part.slice(1), 8);
  if (/^(0|[1-9]\d*)$/.test(part)) return Number(part);
  return null;
}

/**
 * IPv4 in every spelling inet_aton(3) and browsers accept: one to four parts, each decimal,
 * octal (leading 0) or hex (0x); the last part fills the remaining bytes (`127.1`, `2130706433`).
 * One trailing dot is allowed. Returns the four octets, or null when it is not such a spelling.
 */
export function parseIpv4Loose(input: string): [number, number, number, number] | null {
  let text = input;
  if (text.endsWith('.') && text.length > 1) text = text.slice(0, -1);
  const parts = text.split('.');
  if (parts.length < 1 || parts.length > 4) return null;
  const nums: number[] = [];
  for (const p of parts) {
    // Long digit strings would lose precision before the range check; no valid part is this long.
    if (p.length === 0 || p.length > 34) return null;
    const n = inetAtonPart(p);
    if (n === null || !Number.isFinite(n)) return null;
    nums.push(n);
  }
  const lastIndex = nums.length - 1;
  for (let i = 0; i < lastIndex; i++) if (nums[i]! > 255) return null;
  const lastBits = 8 * (4 - lastIndex);
  const lastValue = nums[lastIndex]!;
  if (lastValue >= 2 ** lastBits) return null;
  const octets: number[] = nums.slice(0, lastIndex);
  for (let shift = lastBits - 8; shift >= 0; shift -= 8) octets.push(Math.floor(lastValue / 2 ** shift) % 256);
  return [octets[0]!, octets[1]!, octets[2]!, octets[3]!];
}

const DOTTED_QUAD = /^(25[0-5]|2[0-4]\d|1\d\d|[1-9]\d|\d)(\.(25[0-5]|2[0-4]\d|1\d\d|[1-9]\d|\d)){3}$/;

/**
 * The canonical spellings only: dotted-quad IPv4 without leading zeros, or strict RFC 4291
 * IPv6 (zone id allowed). For fields that name an address, not a probe target.
 */
export function parseIpStrict(text: string): ipaddr.IPv4 | ipaddr.IPv6 | null {
  if (DOTTED_QUAD.test(text)) return ipaddr.IPv4.parse(text);
  const v6 = parseIpv6Text(text);
  if (!v6.ok) return null;
  const addr = new ipaddr.IPv6(v6.parts);
  if (v6.zone !== null) addr.zoneId = v6.zone;
  return addr;
}
