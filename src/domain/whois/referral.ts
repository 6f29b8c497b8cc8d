import net from 'node:net';
import { RWHOIS_PORT, WHOIS_PORT } from './defaults.js';
import { DNS_MAX_NAME_LENGTH } from '../../net/bounds.js';
import type { WhoisServerAddress } from './types.js';

/**
 * Keys that name the next server to ask, most authoritative first: IANA's `refer:` and `whois:`,
 * the ICANN `Registrar WHOIS Server:`, ARIN-style `ReferralServer:`, the old thin `Whois Server:`.
 */
const REFERRAL_KEYS = ['refer', 'whois', 'registrar whois server', 'referralserver', 'whois server'];

/**
 * At least two labels: a single word ("REDACTED", "none") is not a server anyone can reach.
 * At most DNS_MAX_NAME_LENGTH characters, checked apart (a look-ahead would keep the pattern from being proven linear).
 */
const HOST = /^[a-z0-9](?:[a-z0-9-]*[a-z0-9])?(?:\.[a-z0-9](?:[a-z0-9-]*[a-z0-9])?)+$/;

function hostPort(text: string, defaultPort: number): WhoisServerAddress | null {
  let host: string;
  let port = defaultPort;
  const bracketed = /^\[([^\]]+)\](?::(\d{1,5}))?$/.exec(text);
  if (bracketed) {
    host = bracketed[1]!;
    if (bracketed[2] !== undefined) port = Number(bracketed[2]);
  } else if (net.isIPv6(text)) {
    host = text;
  } else {
    const m = /^([^:]+)(?::(\d{1,5}))?$/.exec(text);
    if (!m) return null;
    host = m[1]!.replace(/\.$/, '').toLowerCase();
    if (m[2] !== undefined) port = Number(m[2]);
  }
  if (port < 1 || port > 65535) return null;
  if (net.isIP(host) === 0 && !(host.length <= DNS_MAX_NAME_LENGTH && HOST.test(host))) return null;
  return { host, port };
}

/**
 * A referral value as a server address. Accepts `host`, `host:port`, `[v6]:port`,
 * `whois://host[:port]`, `rwhois://host[:port]` (port 4321 by default), and an http(s) URL with
 * no path, which registries sometimes write for a plain WHOIS host. A URL to a web page is not a
 * WHOIS server: null.
 */
export function parseReferral(value: string): WhoisServerAddress | null {
  const v = value.trim().split(/\s+/)[0] ?? '';
  if (v === '') return null;
  // No (.*)$ for the rest: it made the pattern quadratic, and v (no white space) is all one line.
  const url = /^([a-z][a-z0-9+.-]*):\/\/([^/?#]+)/i.exec(v);
  if (url) {
    const scheme = url[1]!.toLowerCase();
    const rest = v.slice(url[0].length);
    if (scheme === 'whois') return hostPort(url[2]!, WHOIS_PORT);
    if (scheme === 'rwhois') return hostPort(url[2]!, RWHOIS_PORT);
    if ((scheme === 'http' || scheme === 'https') && (rest === '' || rest === '/')) {
      return hostPort(url[2]!.replace(/:\d+$/, ''), WHOIS_PORT);
    }
    return null;
  }
  return hostPort(v.replace(/\/$/, ''), WHOIS_PORT);
}

/** The referral in a WHOIS answer, or null. `entries` are the answer's key/value pairs. */
export function findReferral(entries: ReadonlyArray<{ key: string; value: string }>): WhoisServerAddress | null {
  for (const key of REFERRAL_KEYS) {
    for (const e of entries) {
      if (e.key !== key) continue;
      const server = parseReferral(e.value);
      if (server) return server;
    }
  }
  return null;
}

/** "host" for port 43, else "host:port" ("[v6]:port"). */
export function formatWhoisServer(server: WhoisServerAddress): string {
  if (server.port === WHOIS_PORT) return server.host;
  return net.isIPv6(server.host) ? `[${server.host}]:${server.port}` : `${server.host}:${server.port}`;
}
