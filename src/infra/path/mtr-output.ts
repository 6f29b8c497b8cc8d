import { PathToolError } from '../../errors.js';
import type { MtrHopLine } from '../../domain/path/types.js';
import { addressOf } from './numbers.js';

/**
 * mtr's `--json` report with the fields `-o LDRSNBAWV` (fixtures:
 * test/fixtures/path-tools/mtr-*.txt):
 *
 *   {"report": {"mtr": {...}, "hubs": [{"count": 1, "host": "10.200.1.1", "Loss%": 0.0, "Drop": 0,
 *    "Rcv": 3, "Snt": 3, "Last": 0.063, "Best": 0.063, "Avg": 0.065, "Wrst": 0.068, "StDev": 0.002}, ...]}}
 *
 * `count` is the hop's TTL (older mtr versions wrote it as a string), `host` its address or `???`
 * when nobody answered. The text is bounded by the runner before it is parsed (JSON.parse is
 * linear); anything that is not this shape is an error, never a guess.
 */

/** More hops than max_hops (30) ever makes: a report with more is not ours. */
const MAX_HUBS = 64;

function unreadable(what: string): PathToolError {
  return new PathToolError('mtr', 'failed', `its report cannot be read: ${what}`);
}

function record(value: unknown, what: string): Record<string, unknown> {
  if (typeof value !== 'object' || value === null || Array.isArray(value)) throw unreadable(`${what} is not an object`);
  return value as Record<string, unknown>;
}

function count(hub: Record<string, unknown>, key: string, i: number): number {
  const raw = hub[key];
  const value = typeof raw === 'string' && /^\d{1,9}$/.test(raw) ? Number(raw) : raw;
  if (typeof value !== 'number' || !Number.isInteger(value) || value < 0) throw unreadable(`hubs[${i}].${key} is not a count`);
  return value;
}

function ms(hub: Record<string, unknown>, key: string, i: number): number {
  const value = hub[key];
  if (typeof value !== 'number' || !Number.isFinite(value) || value < 0) throw unreadable(`hubs[${i}].${key} is not a time`);
  return value;
}

/** The report's hops; throws PathToolError (`failed`) when the text is not such a report. */
export function parseMtrJson(text: string): MtrHopLine[] {
  let doc: unknown;
  try {
    doc = JSON.parse(text);
  } catch {
    throw unreadable('the report is not JSON');
  }
  const hubs = record(record(doc, 'the output').report, 'report').hubs;
  if (!Array.isArray(hubs) || hubs.length > MAX_HUBS) throw unreadable('report.hubs is not a list of hops');
  return hubs.map((raw, i) => {
    const hub = record(raw, `hubs[${i}]`);
    const ttl = count(hub, 'count', i);
    if (ttl < 1 || ttl > 255) throw unreadable(`hubs[${i}].count is not a TTL`);
    const host = hub.host;
    const address = host === '???' ? null : typeof host === 'string' ? addressOf(host) : null;
    if (address === null && host !== '???') throw unreadable(`hubs[${i}].host is not an address`);
    const sent = count(hub, 'Snt', i);
    const received = count(hub, 'Rcv', i);
    // A duplicate reply counted twice would make more replies than probes: as many as probes.
    return { ttl, address, sent, received: Math.min(received, sent), last: ms(hub, 'Last', i), best: ms(hub, 'Best', i), avg: ms(hub, 'Avg', i), worst: ms(hub, 'Wrst', i), stdev: ms(hub, 'StDev', i) };
  });
}
