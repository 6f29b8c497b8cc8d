import type { TraceHopLine, TraceProbe } from '../../domain/path/types.js';
import { addressOf, countOf, decimalOf, tokens } from './numbers.js';

/**
 * traceroute's (Modern traceroute for Linux, `-n`) hop lines, one at a time (fixtures:
 * test/fixtures/path-tools/traceroute-*.txt):
 *
 *    1  10.200.1.1  0.041 ms  0.006 ms  0.005 ms
 *    3  * * *
 *    3  10.200.2.2  0.011 ms !X  0.007 ms !X  0.007 ms !X
 *    5  192.0.2.1  1.002 ms 192.0.2.9  2.013 ms *
 *
 * After the TTL, each probe is `*` (unanswered) or `<time> ms` from the address last named on
 * the line (a hop whose probes were answered by several routers names each as it changes), then
 * perhaps an annotation (`!H`, `!N`, `!X`, `!F-1500`, `!<code>`...). The header line and anything
 * that does not read this way are not hops: null.
 */

/** More probes than any line of ours holds (`-q` is at most 3): the rest of such a line is not read. */
const MAX_PROBES = 10;
const MAX_ANNOTATION_CHARS = 16;

export function parseTracerouteLine(line: string): TraceHopLine | null {
  const parts = tokens(line);
  const ttl = countOf(parts[0]);
  if (ttl === null || ttl < 1 || ttl > 255) return null;
  const probes: Array<TraceProbe | null> = [];
  let address: string | null = null;
  for (let i = 1; i < parts.length && probes.length < MAX_PROBES; i++) {
    const part = parts[i]!;
    if (part === '*') {
      probes.push(null);
      continue;
    }
    if (part.startsWith('!')) {
      const last = probes.at(-1);
      if (!last || last.annotation !== null || part.length > MAX_ANNOTATION_CHARS) return null;
      last.annotation = part;
      continue;
    }
    const rtt = decimalOf(part);
    if (rtt !== null && parts[i + 1] === 'ms') {
      if (address === null) return null;
      probes.push({ address, rtt, annotation: null });
      i++;
      continue;
    }
    address = addressOf(part);
    if (address === null) return null;
  }
  return probes.length === 0 ? null : { ttl, probes };
}
