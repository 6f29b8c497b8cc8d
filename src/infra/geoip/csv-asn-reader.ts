import { readFileSync } from 'node:fs';
import { readFile } from 'node:fs/promises';
import ipaddr from 'ipaddr.js';
import { largestCidrInRangeV4, largestCidrInRangeV6, toLookupAddress } from './address.js';
import type { AsnRecord } from '../../domain/ip/geoip.js';

/**
 * IP-to-ASN from the @ip-location-db/asn CSV files: `start,end,asn,org`, inclusive ranges,
 * sorted by start. IPv4 starts/ends may be dotted (asn-ipv4.csv) or decimal (asn-ipv4-num.csv);
 * IPv6 ones are text (asn-ipv6.csv).
 *
 * ~515k rows (~30 MB) are held as typed arrays rather than objects: about 11 MB instead of
 * ~100 MB of small objects, no GC pressure, and a binary search per lookup. Organisation
 * names repeat a lot (~81k distinct), so each row stores an index into one array of names.
 */

export interface AsnTableV4 {
  readonly starts: Uint32Array;
  readonly ends: Uint32Array;
  readonly asns: Uint32Array;
  readonly orgIndex: Uint32Array;
}

/** 128-bit bounds split into 64-bit halves: BigUint64Array keeps them compact and comparable. */
export interface AsnTableV6 {
  readonly startHi: BigUint64Array;
  readonly startLo: BigUint64Array;
  readonly endHi: BigUint64Array;
  readonly endLo: BigUint64Array;
  readonly asns: Uint32Array;
  readonly orgIndex: Uint32Array;
}

export interface CsvAsnFiles {
  ipv4?: string;
  ipv6?: string;
}

const COMMA = 0x2c;
const NEWLINE = 0x0a;
const CR = 0x0d;
const DOT = 0x2e;
const COLON = 0x3a;

/** Deduplicates organisation names across files; index 0 is "no name". */
class OrgInterner {
  readonly names: Array<string | null> = [null];
  private readonly index = new Map<string, number>();

  intern(raw: string): number {
    let name = raw;
    if (name.length >= 2 && name.startsWith('"') && name.endsWith('"')) name = name.slice(1, -1).replaceAll('""', '"');
    name = name.trim();
    if (!name) return 0;
    let idx = this.index.get(name);
    if (idx === undefined) {
      idx = this.names.length;
      this.names.push(name);
      this.index.set(name, idx);
    }
    return idx;
  }
}

function countLines(buf: Buffer): number {
  let n = 1;
  for (let pos = buf.indexOf(NEWLINE); pos !== -1; pos = buf.indexOf(NEWLINE, pos + 1)) n++;
  return n;
}

/** Decimal digits only; -1 when the field is anything else (header row, garbage). */
function parseDecimal(buf: Buffer, start: number, end: number): number {
  if (end <= start || end - start > 10) return -1;
  let n = 0;
  for (let i = start; i < end; i++) {
    const d = buf[i]! - 48;
    if (d < 0 || d > 9) return -1;
    n = n * 10 + d;
  }
  return n > 0xffffffff ? -1 : n;
}

function parseIPv4Field(buf: Buffer, start: number, end: number): number {
  let value = 0;
  let octet = 0;
  let digits = 0;
  let dots = 0;
  let sawDot = false;
  for (let i = start; i < end; i++) {
    const c = buf[i]!;
    if (c === DOT) {
      if (digits === 0 || octet > 255) return -1;
      value = value * 256 + octet;
      octet = 0;
      digits = 0;
      dots++;
      sawDot = true;
    } else {
      const d = c - 48;
      if (d < 0 || d > 9) return -1;
      octet = octet * 10 + d;
      digits++;
    }
  }
  // The -num files carry the address as one decimal number.
  if (!sawDot) return parseDecimal(buf, start, end);
  if (dots !== 3 || digits === 0 || octet > 255) return -1;
  return value * 256 + octet;
}

function hexValue(c: number): number {
  if (c >= 48 && c <= 57) return c - 48;
  if (c >= 97 && c <= 102) return c - 87;
  if (c >= 65 && c <= 70) return c - 55;
  return -1;
}

/**
 * Fills `groups` with the eight 16-bit groups of the IPv6 text in buf[start, end).
 * Handles `::`; an embedded IPv4 tail (never seen in this data) goes through ipaddr.js.
 */
function parseIPv6Field(buf: Buffer, start: number, end: number, groups: Uint16Array): boolean {
  groups.fill(0);
  let count = 0;
  let gapAt = -1;
  let i = start;
  if (end - start >= 2 && buf[i] === COLON && buf[i + 1] === COLON) {
    gapAt = 0;
    i += 2;
  }
  while (i < end) {
    let value = 0;
    let digits = 0;
    while (i < end) {
      const h = hexValue(buf[i]!);
      if (h < 0) break;
      value = value * 16 + h;
      digits++;
      i++;
    }
    if (i < end && buf[i] === DOT) return parseIPv6Slow(buf.toString('latin1', start, end), groups);
    if (digits === 0 || digits > 4 || count >= 8) return false;
    groups[count++] = value;
    if (i === end) break;
    if (buf[i] !== COLON) return false;
    i++;
    if (i < end && buf[i] === COLON) {
      if (gapAt >= 0) return false;
      gapAt = count;
      i++;
    } else if (i === end) {
      return false;
    }
  }
  if (gapAt < 0) return count === 8;
  if (count > 7) return false;
  // Move the groups after `::` to the end.
  const tail = count - gapAt;
  for (let k = tail - 1; k >= 0; k--) {
    groups[8 - tail + k] = groups[gapAt + k]!;
  }
  groups.fill(0, gapAt, 8 - tail);
  return true;
}

function parseIPv6Slow(text: string, groups: Uint16Array): boolean {
  try {
    const parts = ipaddr.IPv6.parse(text).parts;
    for (let k = 0; k < 8; k++) groups[k] = parts[k]!;
    return true;
  } catch {
    return false;
  }
}

/** Field offsets of one `start,end,asn,org` line. */
interface Fields {
  s0: number;
  e0: number;
  s1: number;
  e1: number;
  asn: number;
  orgStart: number;
  orgEnd: number;
}

/**
 * Reads the line starting at `pos` into `f` and returns where the next line starts. `f.asn`
 * is 0 for a line that is not a data row (blank, header, AS0 = "not routed").
 *
 * Why not a CSV library: a generic parser builds a string per field and an array per row,
 * i.e. millions of short-lived objects for ~515k rows (seconds of work and ~100 MB of
 * garbage). This file has four columns, only the last ever quoted, and no quoted newlines, so
 * finding the line end with Buffer.indexOf (memchr) and the three commas with a short byte
 * scan is correct, allocates nothing, and keeps the whole load well under a second.
 */
function nextRow(buf: Buffer, pos: number, f: Fields): number {
  const len = buf.length;
  let eol = buf.indexOf(NEWLINE, pos);
  if (eol < 0) eol = len;
  let end = eol;
  if (end > pos && buf[end - 1] === CR) end--;
  f.asn = 0;
  let c1 = pos;
  while (c1 < end && buf[c1] !== COMMA) c1++;
  let c2 = c1 + 1;
  while (c2 < end && buf[c2] !== COMMA) c2++;
  if (c2 >= end) return eol + 1;
  let c3 = c2 + 1;
  while (c3 < end && buf[c3] !== COMMA) c3++;
  const asn = parseDecimal(buf, c2 + 1, c3);
  if (asn > 0) {
    f.s0 = pos;
    f.e0 = c1;
    f.s1 = c1 + 1;
    f.e1 = c2;
    f.asn = asn;
    f.orgStart = Math.min(c3 + 1, end);
    f.orgEnd = end;
  }
  return eol + 1;
}

function parseAsnCsvV4(buf: Buffer, orgs: OrgInterner): AsnTableV4 {
  const capacity = countLines(buf);
  const starts = new Uint32Array(capacity);
  const ends = new Uint32Array(capacity);
  const asns = new Uint32Array(capacity);
  const orgIndex = new Uint32Array(capacity);
  const f: Fields = { s0: 0, e0: 0, s1: 0, e1: 0, asn: 0, orgStart: 0, orgEnd: 0 };
  let n = 0;
  let sorted = true;
  for (let pos = 0; pos < buf.length; ) {
    pos = nextRow(buf, pos, f);
    if (f.asn === 0) continue;
    const lo = parseIPv4Field(buf, f.s0, f.e0);
    const hi = parseIPv4Field(buf, f.s1, f.e1);
    if (lo < 0 || hi < lo) continue;
    if (n > 0 && lo < starts[n - 1]!) sorted = false;
    starts[n] = lo;
    ends[n] = hi;
    asns[n] = f.asn;
    orgIndex[n] = orgs.intern(buf.toString('utf8', f.orgStart, f.orgEnd));
    n++;
  }
  const table = { starts: starts.subarray(0, n), ends: ends.subarray(0, n), asns: asns.subarray(0, n), orgIndex: orgIndex.subarray(0, n) };
  return sorted ? table : sortV4(table);
}

function parseAsnCsvV6(buf: Buffer, orgs: OrgInterner): AsnTableV6 {
  const capacity = countLines(buf);
  const startHi = new BigUint64Array(capacity);
  const startLo = new BigUint64Array(capacity);
  const endHi = new BigUint64Array(capacity);
  const endLo = new BigUint64Array(capacity);
  const asns = new Uint32Array(capacity);
  const orgIndex = new Uint32Array(capacity);
  // Writing the halves as two 32-bit words through a DataView avoids creating four BigInts
  // per row at load time; BigInts are only made per lookup.
  const views = [startHi, startLo, endHi, endLo].map((a) => new DataView(a.buffer));
  const [vStartHi, vStartLo, vEndHi, vEndLo] = views as [DataView, DataView, DataView, DataView];
  const littleEndian = new Uint8Array(new Uint16Array([1]).buffer)[0] === 1;
  const put = (view: DataView, row: number, g: Uint16Array, from: number): void => {
    const high = g[from]! * 0x10000 + g[from + 1]!;
    const low = g[from + 2]! * 0x10000 + g[from + 3]!;
    const offset = row * 8;
    view.setUint32(offset + (littleEndian ? 4 : 0), high, littleEndian);
    view.setUint32(offset + (littleEndian ? 0 : 4), low, littleEndian);
  };
  const gs = new Uint16Array(8);
  const ge = new Uint16Array(8);
  const f: Fields = { s0: 0, e0: 0, s1: 0, e1: 0, asn: 0, orgStart: 0, orgEnd: 0 };
  let n = 0;
  for (let pos = 0; pos < buf.length; ) {
    pos = nextRow(buf, pos, f);
    if (f.asn === 0) continue;
    if (!parseIPv6Field(buf, f.s0, f.e0, gs) || !parseIPv6Field(buf, f.s1, f.e1, ge)) continue;
    put(vStartHi, n, gs, 0);
    put(vStartLo, n, gs, 4);
    put(vEndHi, n, ge, 0);
    put(vEndLo, n, ge, 4);
    asns[n] = f.asn;
    orgIndex[n] = orgs.intern(buf.toString('utf8', f.orgStart, f.orgEnd));
    n++;
  }
  const table = {
    startHi: startHi.subarray(0, n),
    startLo: startLo.subarray(0, n),
    endHi: endHi.subarray(0, n),
    endLo: endLo.subarray(0, n),
    asns: asns.subarray(0, n),
    orgIndex: orgIndex.subarray(0, n),
  };
  return isSortedV6(table) ? table : sortV6(table);
}

function permute<T extends Uint32Array | BigUint64Array>(a: T, order: Uint32Array): T {
  const out = a.slice() as T;
  for (let i = 0; i < order.length; i++) out[i] = a[order[i]!]!;
  return out;
}

/** The published files are sorted; a hand-edited or future one might not be. */
function sortV4(t: AsnTableV4): AsnTableV4 {
  const order = Uint32Array.from(t.starts.keys()).sort((a, b) => t.starts[a]! - t.starts[b]!);
  return { starts: permute(t.starts, order), ends: permute(t.ends, order), asns: permute(t.asns, order), orgIndex: permute(t.orgIndex, order) };
}

function isSortedV6(t: AsnTableV6): boolean {
  for (let i = 1; i < t.asns.length; i++) {
    const ph = t.startHi[i - 1]!;
    const h = t.startHi[i]!;
    if (h < ph || (h === ph && t.startLo[i]! < t.startLo[i - 1]!)) return false;
  }
  return true;
}

function sortV6(t: AsnTableV6): AsnTableV6 {
  const cmp = (x: bigint, y: bigint): number => (x < y ? -1 : x > y ? 1 : 0);
  const order = Uint32Array.from(t.asns.keys()).sort(
    (a, b) => cmp(t.startHi[a]!, t.startHi[b]!) || cmp(t.startLo[a]!, t.startLo[b]!),
  );
  return {
    startHi: permute(t.startHi, order),
    startLo: permute(t.startLo, order),
    endHi: permute(t.endHi, order),
    endLo: permute(t.endLo, order),
    asns: permute(t.asns, order),
    orgIndex: permute(t.orgIndex, order),
  };
}

/**
 * Lookups binary-search for the last range starting at or before the address and check its
 * end. Ranges are disjoint except one DoD block in the current IPv4 file, where the later
 * (more specific) row wins for the addresses both cover.
 */
export class CsvAsnReader {
  private constructor(
    private readonly v4: AsnTableV4 | null,
    private readonly v6: AsnTableV6 | null,
    private readonly orgs: ReadonlyArray<string | null>,
  ) {}

  get size(): { ipv4: number; ipv6: number; organizations: number } {
    return { ipv4: this.v4?.asns.length ?? 0, ipv6: this.v6?.asns.length ?? 0, organizations: this.orgs.length - 1 };
  }

  static fromBuffers(ipv4: Buffer | null, ipv6: Buffer | null): CsvAsnReader {
    const orgs = new OrgInterner();
    const v4 = ipv4 ? parseAsnCsvV4(ipv4, orgs) : null;
    const v6 = ipv6 ? parseAsnCsvV6(ipv6, orgs) : null;
    return new CsvAsnReader(v4, v6, orgs.names);
  }

  static async open(files: CsvAsnFiles): Promise<CsvAsnReader> {
    const [v4, v6] = await Promise.all([
      files.ipv4 ? readFile(files.ipv4) : null,
      files.ipv6 ? readFile(files.ipv6) : null,
    ]);
    return CsvAsnReader.fromBuffers(v4, v6);
  }

  static openSync(files: CsvAsnFiles): CsvAsnReader {
    return CsvAsnReader.fromBuffers(
      files.ipv4 ? readFileSync(files.ipv4) : null,
      files.ipv6 ? readFileSync(files.ipv6) : null,
    );
  }

  asn(ip: string): AsnRecord | null {
    const address = toLookupAddress(ip);
    if (!address) return null;
    if (address.version === 4) {
      const t = this.v4;
      if (!t) return null;
      const ipv = address.value;
      let lo = 0;
      let hi = t.starts.length - 1;
      let found = -1;
      while (lo <= hi) {
        const mid = (lo + hi) >>> 1;
        if (t.starts[mid]! <= ipv) {
          found = mid;
          lo = mid + 1;
        } else {
          hi = mid - 1;
        }
      }
      if (found < 0 || t.ends[found]! < ipv) return null;
      return {
        number: t.asns[found]!,
        organization: this.orgs[t.orgIndex[found]!] ?? null,
        network: largestCidrInRangeV4(ipv, t.starts[found]!, t.ends[found]!),
      };
    }
    const t = this.v6;
    if (!t) return null;
    const qh = address.hi;
    const ql = address.lo;
    let lo = 0;
    let hi = t.asns.length - 1;
    let found = -1;
    while (lo <= hi) {
      const mid = (lo + hi) >>> 1;
      const sh = t.startHi[mid]!;
      if (sh < qh || (sh === qh && t.startLo[mid]! <= ql)) {
        found = mid;
        lo = mid + 1;
      } else {
        hi = mid - 1;
      }
    }
    if (found < 0) return null;
    const eh = t.endHi[found]!;
    if (eh < qh || (eh === qh && t.endLo[found]! < ql)) return null;
    return {
      number: t.asns[found]!,
      organization: this.orgs[t.orgIndex[found]!] ?? null,
      network: largestCidrInRangeV6(
        (qh << 64n) | ql,
        (t.startHi[found]! << 64n) | t.startLo[found]!,
        (eh << 64n) | t.endLo[found]!,
      ),
    };
  }
}
