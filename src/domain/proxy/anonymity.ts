import ipaddr from 'ipaddr.js';
import { normalizeAddress } from './judge.js';
import type { AnonymityLevel, JudgeEcho } from './types.js';

/**
 * The anonymity verdict of docs/proxy.md, from what reached the judge:
 *   transparent  our own address reached the target: as the peer, or inside any header;
 *   anonymous    a header announces a proxy (Via, Forwarded, X-Forwarded-For, ...) but
 *                carries none of our addresses;
 *   elite        nothing reveals a proxy.
 * Our own addresses must be known: with none, nothing can be called transparent (a proxy
 * that leaks us would be reported as anonymous or elite), so the verdict is null instead.
 */

/** Headers whose mere presence announces a proxy (lowercase). */
const PROXY_HEADERS: ReadonlySet<string> = new Set([
  'via',
  'forwarded',
  'forwarded-for',
  'forwarded-for-ip',
  'x-forwarded',
  'x-forwarded-for',
  'x-forwarded-host',
  'x-forwarded-proto',
  'x-forwarded-port',
  'x-forwarded-server',
  'x-real-ip',
  'client-ip',
  'x-client-ip',
  'x-cluster-client-ip',
  'true-client-ip',
  'x-originating-ip',
  'x-remote-ip',
  'x-remote-addr',
  'x-proxy-id',
  'x-proxy-connection',
  'proxy-connection',
  'proxy-authorization',
  'x-bluecoat-via',
  'x-via',
  'xroxy-connection',
  'x-imforwards',
  'x-proxyuser-ip',
  'coming-from',
  'x-coming-from',
  'useragent-via',
  'x-att-deviceid',
]);

/** Prefixes that only proxies use (X-Forwarded-Anything, Proxy-Anything). */
const PROXY_PREFIXES = ['x-forwarded-', 'proxy-'];

/**
 * Longest textual address worth parsing: eight groups of four hex digits and seven colons, or six
 * groups with a dotted IPv4 tail ("ffff:ffff:ffff:ffff:ffff:ffff:255.255.255.255", 45).
 */
const MAX_ADDRESS_TEXT = 45;

/** Header whose value names the judge, not the client: an address in it proves nothing. */
const NOT_SCANNED: ReadonlySet<string> = new Set(['host']);

export interface AnonymityVerdict {
  level: AnonymityLevel | null;
  /** Names of the headers that revealed a proxy or our address, as received. */
  headers: string[];
  /** Why the level is what it is (or why there is none). */
  reason: string;
}

function canonical(text: string): string | null {
  const bare = text.replace(/^\[|\]$/g, '').split('%')[0]!;
  if (!ipaddr.isValid(bare)) return null;
  try {
    const addr = ipaddr.process(bare);
    // Reject loose IPv4 spellings ipaddr accepts ("1", "0x7f.1"): a header token like "1" is not an address.
    if (!bare.includes(':') && !/^\d{1,3}(\.\d{1,3}){3}$/.test(bare)) return null;
    return normalizeAddress(addr.toString());
  } catch {
    return null;
  }
}

/** [0-9A-Fa-f:.]: what an IPv6 address, IPv4 tail included, is written with. */
function isV6Char(code: number): boolean {
  return (code >= 0x30 && code <= 0x3a) || (code >= 0x41 && code <= 0x46) || (code >= 0x61 && code <= 0x66) || code === 0x2e;
}

/**
 * IPv6 candidates in a header value: in each run of hex digits, colons and dots, the part from
 * the first dot-free stretch holding two colons to the run's end (so an IPv4 tail stays on).
 * The same strings as /[0-9A-Fa-f:]*:[0-9A-Fa-f:]*:[0-9A-Fa-f:.]*\/g matched, but that pattern
 * backtracks quadratically over a long run (60 KB of it stalled the event loop for seconds);
 * this reads the value once.
 */
function v6Candidates(value: string): string[] {
  const out: string[] = [];
  let i = 0;
  while (i < value.length) {
    if (!isV6Char(value.charCodeAt(i))) {
      i++;
      continue;
    }
    const runStart = i;
    let stretchStart = i;
    let colons = 0;
    let start = -1;
    for (; i < value.length; i++) {
      const code = value.charCodeAt(i);
      if (!isV6Char(code)) break;
      if (start >= 0) continue;
      if (code === 0x2e) {
        stretchStart = i + 1;
        colons = 0;
      } else if (code === 0x3a && ++colons === 2) {
        start = stretchStart;
      }
    }
    if (start >= 0 && start >= runStart) out.push(value.slice(start, i));
  }
  return out;
}

/** Every IPv4 or IPv6 address written anywhere in a header value. */
export function addressesIn(value: string): string[] {
  const found = new Set<string>();
  for (const m of value.matchAll(/\d{1,3}(?:\.\d{1,3}){3}/g)) {
    const c = canonical(m[0]);
    if (c) found.add(c);
  }
  for (let candidate of v6Candidates(value)) {
    // "[2001:db8::1]:4711" arrives here without brackets but possibly with the ":4711" tail.
    for (let i = 0; i < 2 && candidate.length > 0; i++) {
      // Longer text is no address: not worth handing a 60 KB run to the address parser.
      const c = candidate.length <= MAX_ADDRESS_TEXT ? canonical(candidate) : null;
      if (c) {
        found.add(c);
        break;
      }
      const lastColon = candidate.lastIndexOf(':');
      candidate = lastColon < 0 ? '' : candidate.slice(0, lastColon);
    }
  }
  return [...found];
}

export function announcesProxy(name: string): boolean {
  const lower = name.toLowerCase();
  return PROXY_HEADERS.has(lower) || PROXY_PREFIXES.some((p) => lower.startsWith(p));
}

export function judgeAnonymity(echo: JudgeEcho, ownAddresses: ReadonlySet<string>): AnonymityVerdict {
  if (ownAddresses.size === 0) {
    return { level: null, headers: [], reason: 'our own public address is not known yet, so a leak of it could not be recognised' };
  }
  const own = new Set([...ownAddresses].map((a) => canonical(a) ?? a));
  const peer = canonical(echo.remote_address) ?? echo.remote_address;
  const leaking: string[] = [];
  const announcing: string[] = [];
  for (const [name, value] of echo.headers) {
    const lower = name.toLowerCase();
    if (!NOT_SCANNED.has(lower) && addressesIn(value).some((a) => own.has(a))) leaking.push(name);
    else if (announcesProxy(lower)) announcing.push(name);
  }
  if (own.has(peer)) {
    return { level: 'transparent', headers: leaking, reason: `the judge saw the request come from our own address ${peer}` };
  }
  if (leaking.length > 0) {
    return { level: 'transparent', headers: leaking, reason: `our own address reached the judge in ${leaking.join(', ')}` };
  }
  if (announcing.length > 0) {
    return { level: 'anonymous', headers: announcing, reason: `${announcing.join(', ')} announced a proxy; our address did not reach the judge` };
  }
  return { level: 'elite', headers: [], reason: 'nothing that reached the judge reveals a proxy' };
}
