import type { PingReply } from '../../domain/path/types.js';
import { countOf, decimalOf, tokens } from './numbers.js';

/**
 * iputils ping's output, one line at a time (fixtures: test/fixtures/path-tools/ping-*.txt):
 *
 *   64 bytes from 10.200.3.2: icmp_seq=1 ttl=62 time=0.058 ms
 *   64 bytes from 10.200.3.2: icmp_seq=1 ttl=62 time=0.059 ms (DUP!)
 *   From 10.200.2.2 icmp_seq=1 Destination Host Unreachable
 *   4 packets transmitted, 4 received, +3 duplicates, 0% packet loss, time 613ms
 *
 * A reply is a line with ` bytes from ` and its `icmp_seq=`, `ttl=` and `time=` fields; an error
 * from a router ("From ...") is no reply. Replies ping itself does not count (BAD CHECKSUM) are
 * skipped. Any other line (the header, the rtt summary, blank lines) says nothing more.
 */

export type PingLine = { kind: 'reply'; reply: PingReply } | { kind: 'transmitted'; count: number } | null;

function field(parts: readonly string[], key: string): string | undefined {
  const part = parts.find((p) => p.startsWith(key));
  return part?.slice(key.length);
}

export function parsePingLine(line: string): PingLine {
  const parts = tokens(line);
  if (parts[1] === 'packets' && parts[2] === 'transmitted,') {
    const count = countOf(parts[0]);
    return count === null ? null : { kind: 'transmitted', count };
  }
  if (parts[1] !== 'bytes' || parts[2] !== 'from' || countOf(parts[0]) === null) return null;
  if (parts.includes('(BAD')) return null;
  const seq = countOf(field(parts, 'icmp_seq='));
  const ttl = countOf(field(parts, 'ttl='));
  const rtt = decimalOf(field(parts, 'time='));
  if (seq === null || ttl === null || rtt === null) return null;
  return { kind: 'reply', reply: { seq, ttl, rtt, duplicate: parts.includes('(DUP!)') } };
}
