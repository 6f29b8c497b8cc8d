import ipaddr from 'ipaddr.js';
import { normalizeAddress } from './judge.js';
import type { AnonymityLevel, JudgeEcho } from './types.js';

/**
 * The anonymity verdict of API.md, from what reached the judge:
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

/** Every IPv4 or IPv6 address written anywhere in a header value. */
export function addressesIn(value: string): string[] {
  const found = new Set<string>();
  for (const m of value.matchAll(/\d{1,3}(?:\.\d{1,3}){3}/g)) {
    const c = canonical(m[0]);
    if (c) found.add(c);
  }
  // IPv6 candidates: runs of hex digits and colons (with an optional IPv4 tail), two colons at least.
  for (const m of value.matchAll(/[0-9A-Fa-f:]*:[0-9A-Fa-f:]*:[0-9A-Fa-f:.]*/g)) {
    let candidate = m[0];
    // "[2001:db8::1]:4711" arrives here without brackets but possibly with the ":4711" tail.
    for (let i = 0; i < 2 && candidate.length > 0; i++) {
      const c = canonical(candidate);
      if (c) {
        found.add(c);
        break;
      }
      candidate = candidate.replace(/:[^:]*$/, '');
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
