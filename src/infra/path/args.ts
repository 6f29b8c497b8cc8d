import { MAX_PORT, MIN_PORT } from '../../net/bounds.js';
import { parseIpStrict } from '../../net/ip-text.js';
import {
  MTR_MAX_PACKETS,
  MTR_MIN_PACKETS,
  PATH_MAX_MAX_HOPS,
  PATH_MIN_MAX_HOPS,
  PING_MAX_PACKETS,
  PING_MIN_PACKETS,
  TRACEROUTE_MAX_QUERIES,
  TRACEROUTE_MIN_QUERIES,
} from '../../domain/path/defaults.js';
import type { MtrRequest, PingRequest, TracerouteRequest } from '../../domain/path/types.js';
import { MTR_FIELDS, MTR_GRACE_S, MTR_INTERVAL_S, PING_INTERVAL, PING_WAIT_S, TRACEROUTE_WAIT_S } from './defaults.js';

/**
 * The programs' argument lists (docs/path-tools.md lists them), built only from integers checked
 * here and the checked address, which must be a numeric address: no name for the program to
 * resolve, nothing it could read as an option. They are handed to spawn as a list, never to a
 * shell. A value outside its bound is a bug of the caller (the service validates first): a
 * TypeError, and nothing runs.
 */

function integer(name: string, value: number, min: number, max: number): string {
  if (!Number.isInteger(value) || value < min || value > max) throw new TypeError(`path tool argument ${name}: ${value} is not an integer in ${min}..${max}`);
  return String(value);
}

/** The address, spelled as parsed (no zone id: a path tool's target is global). */
function address(value: string, family: 4 | 6): string {
  const parsed = parseIpStrict(value);
  if (parsed === null || parsed.kind() !== (family === 4 ? 'ipv4' : 'ipv6') || ('zoneId' in parsed && parsed.zoneId)) {
    throw new TypeError(`path tool argument address: ${JSON.stringify(value)} is not an IPv${family} address`);
  }
  return parsed.toString();
}

const port = (value: number): string => integer('port', value, MIN_PORT, MAX_PORT);

const familyFlag = (family: 4 | 6): string => (family === 4 ? '-4' : '-6');

/** `ping -n -4 -c 4 -i 0.2 -W 2 -- 192.0.2.1` */
export function pingArgs(req: PingRequest): string[] {
  return ['-n', familyFlag(req.family), '-c', integer('packets', req.packets, PING_MIN_PACKETS, PING_MAX_PACKETS), '-i', PING_INTERVAL, '-W', String(PING_WAIT_S), '--', address(req.address, req.family)];
}

/** `traceroute -n -4 -I -q 3 -m 30 -w 3 -- 192.0.2.1` (udp: `-U -p <port>`, tcp: `-T -p <port>`) */
export function tracerouteArgs(req: TracerouteRequest): string[] {
  const protocol = { icmp: ['-I'], udp: ['-U', '-p', port(req.port)], tcp: ['-T', '-p', port(req.port)] }[req.protocol];
  if (!protocol) throw new TypeError(`path tool argument protocol: ${String(req.protocol)}`);
  return [
    '-n',
    familyFlag(req.family),
    ...protocol,
    '-q',
    integer('queries', req.queries, TRACEROUTE_MIN_QUERIES, TRACEROUTE_MAX_QUERIES),
    '-m',
    integer('max_hops', req.maxHops, PATH_MIN_MAX_HOPS, PATH_MAX_MAX_HOPS),
    '-w',
    String(TRACEROUTE_WAIT_S),
    '--',
    address(req.address, req.family),
  ];
}

/** `mtr -n -4 -c 10 -i 1 -G 2 -m 30 --json -o LDRSNBAWV -- 192.0.2.1` (udp: `-u -P <port>`, tcp: `-T -P <port>`) */
export function mtrArgs(req: MtrRequest): string[] {
  const protocol = { icmp: [], udp: ['-u', '-P', port(req.port)], tcp: ['-T', '-P', port(req.port)] }[req.protocol];
  if (!protocol) throw new TypeError(`path tool argument protocol: ${String(req.protocol)}`);
  return [
    '-n',
    familyFlag(req.family),
    ...protocol,
    '-c',
    integer('packets', req.packets, MTR_MIN_PACKETS, MTR_MAX_PACKETS),
    '-i',
    String(MTR_INTERVAL_S),
    '-G',
    String(MTR_GRACE_S),
    '-m',
    integer('max_hops', req.maxHops, PATH_MIN_MAX_HOPS, PATH_MAX_MAX_HOPS),
    '--json',
    '-o',
    MTR_FIELDS,
    '--',
    address(req.address, req.family),
  ];
}
