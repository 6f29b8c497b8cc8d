import dnsPacket, { type DecodedPacket } from 'dns-packet';
import { DNS_MAX_NAME_STEPS, DNS_MAX_RECORDS } from './defaults.js';
import { NameBudgetError } from '../../errors.js';

/**
 * dns-packet decodes a message in time proportional to the names it expands, not to the bytes
 * it was given: a compression pointer may point at another pointer, and every name that points
 * into such a chain walks all of it again. A 64 KiB answer made of one 8,000-pointer chain and
 * 4,000 records naming its end kept the event loop busy for 650 ms; 5,000 records each naming
 * one 127-label name, all legal compression, for 100 ms (bench/hostile-peers.ts).
 *
 * So every name dns-packet decodes is first walked here with its own rules (labels and pointers,
 * pointers only backwards, 254 characters at most), counting the steps of all the message's names
 * together; past DNS_MAX_NAME_STEPS the message is refused before dns-packet expands it. The walk
 * stops at the budget, so a refused message costs at most that many steps too.
 *
 * Records past DNS_MAX_RECORDS are not decoded at all: the header's counts are lowered (answers
 * kept first), so dns-packet stops there; recordsCut() tells how many were left.
 */

type NameDecode = ((buf: Buffer, offset?: number, opts?: { mail?: boolean }) => string) & { bytes: number };

/** dns-packet's name codec: its own record decoders call it through this object. */
const nameCodec = (dnsPacket as unknown as { name: { decode: NameDecode } }).name;

/** Longest name dns-packet accepts, in presentation form plus the root's dot. */
const MAX_NAME_TOTAL = 254;

/**
 * Steps dns-packet's name decoder takes for the name at `offset` (one per label, pointer or end),
 * counted up to `limit`; limit + 1 means "more than the budget".
 */
export function nameSteps(buf: Buffer, offset: number, limit: number): number {
  let o = offset;
  let segmentStart = offset;
  let total = 0;
  let steps = 0;
  while (steps <= limit) {
    steps++;
    if (o >= buf.length) return steps;
    const len = buf[o++]!;
    if (len === 0) return steps;
    if ((len & 0xc0) === 0) {
      if (o + len > buf.length) return steps;
      total += len + 1;
      if (total > MAX_NAME_TOTAL) return steps;
      o += len;
    } else if ((len & 0xc0) === 0xc0) {
      if (o + 1 > buf.length) return steps;
      const target = buf.readUInt16BE(o - 1) - 0xc000;
      // Only pointers to data before the current stretch: dns-packet throws on the others.
      if (target >= segmentStart) return steps;
      o = target;
      segmentStart = target;
    } else {
      return steps;
    }
  }
  return steps;
}

type RdataDecode = ((buf: Buffer, offset?: number) => unknown) & { bytes: number };

/** dns-packet's DNSKEY codec: its answer decoder looks it up by type and calls `decode` on it. */
const dnskeyCodec = (dnsPacket as unknown as { dnskey: { decode: RdataDecode } }).dnskey;

/**
 * DNSKEY RDATA read within its RDLENGTH, whatever its protocol byte. dns-packet's own throws for a
 * protocol other than 3, and one such record made the whole message unreadable (a UDP answer
 * ignored until the timeout), while dig prints it; and it reads past a record shorter than its
 * fixed fields into the next one. A record shorter than 4 bytes is malformed here too.
 */
const decodeDnskey = ((buf: Buffer, offset = 0) => {
  const length = buf.readUInt16BE(offset);
  const end = offset + 2 + length;
  if (length < 4 || end > buf.length) throw new RangeError('DNSKEY RDATA shorter than its fixed fields');
  decodeDnskey.bytes = length + 2;
  return { flags: buf.readUInt16BE(offset + 2), protocol: buf[offset + 4]!, algorithm: buf[offset + 5]!, key: buf.subarray(offset + 6, end) };
}) as RdataDecode;
decodeDnskey.bytes = 0;

const HEADER_BYTES = 12;
const cutCounts = new WeakMap<DecodedPacket, number>();

/** Records of the message left unread by decodeBounded (past DNS_MAX_RECORDS). */
export function recordsCut(packet: DecodedPacket): number {
  return cutCounts.get(packet) ?? 0;
}

/** The message with its record counts lowered to DNS_MAX_RECORDS in all (answers first), and how many that leaves out. */
function capRecords(buf: Buffer): { message: Buffer; cut: number } {
  if (buf.length < HEADER_BYTES) return { message: buf, cut: 0 };
  const an = buf.readUInt16BE(6);
  const ns = buf.readUInt16BE(8);
  const ar = buf.readUInt16BE(10);
  if (an + ns + ar <= DNS_MAX_RECORDS) return { message: buf, cut: 0 };
  const keepAn = Math.min(an, DNS_MAX_RECORDS);
  const keepNs = Math.min(ns, DNS_MAX_RECORDS - keepAn);
  const keepAr = Math.min(ar, DNS_MAX_RECORDS - keepAn - keepNs);
  const header = Buffer.from(buf.subarray(0, HEADER_BYTES));
  header.writeUInt16BE(keepAn, 6);
  header.writeUInt16BE(keepNs, 8);
  header.writeUInt16BE(keepAr, 10);
  return { message: Buffer.concat([header, buf.subarray(HEADER_BYTES)]), cut: an + ns + ar - keepAn - keepNs - keepAr };
}

/**
 * dns-packet's decode with a budget on name decompression and on records. Throws NameBudgetError
 * for a message past the name budget, and whatever dns-packet throws for a malformed one.
 */
export function decodeBounded(buf: Buffer): DecodedPacket {
  const { message, cut } = capRecords(buf);
  const original = nameCodec.decode;
  const originalDnskey = dnskeyCodec.decode;
  let left = DNS_MAX_NAME_STEPS;
  const bounded = ((b: Buffer, offset?: number, opts?: { mail?: boolean }): string => {
    const steps = nameSteps(b, offset ?? 0, left);
    if (steps > left) throw new NameBudgetError(DNS_MAX_NAME_STEPS);
    left -= steps;
    // dns-packet records the bytes read in `name.decode.bytes`, which is `bounded` meanwhile.
    return original(b, offset, opts);
  }) as NameDecode;
  bounded.bytes = 0;
  // Swapped in for this one synchronous call only, and always put back.
  nameCodec.decode = bounded;
  dnskeyCodec.decode = decodeDnskey;
  try {
    const packet = dnsPacket.decode(message);
    if (cut > 0) cutCounts.set(packet, cut);
    return packet;
  } finally {
    nameCodec.decode = original;
    dnskeyCodec.decode = originalDnskey;
  }
}
