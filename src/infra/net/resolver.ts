import { promises as dns } from 'node:dns';
import type { HostPort } from '../../config.js';
import { formatServer } from '../dns/transport.js';
import { DNS_DEADLINE_MS, DNS_TIMEOUT_MS, DNS_TRIES } from './defaults.js';
import { withDeadline } from '../../lib/deadline.js';
import { ResolveError, type ResolveErrorCode } from '../../errors.js';

/**
 * Name resolution for probe targets: A and AAAA only, through the configured servers, never
 * through getaddrinfo (whose /etc/hosts and search domains would answer things the policy
 * cannot see coming).
 */

export interface HostResolver {
  /** Addresses of one family, as text. Rejects with ResolveError. */
  resolve(hostname: string, family: 4 | 6): Promise<string[]>;
}

const MESSAGES: Record<ResolveErrorCode, (host: string, family: 4 | 6) => string> = {
  ENOTFOUND: (h) => `${h} does not exist (NXDOMAIN)`,
  ENODATA: (h, f) => `${h} has no ${f === 4 ? 'A (IPv4)' : 'AAAA (IPv6)'} record`,
  ETIMEOUT: (h) => `DNS lookup of ${h} timed out`,
  ESERVFAIL: (h) => `DNS server failed to answer for ${h} (SERVFAIL)`,
  EREFUSED: (h) => `DNS server refused to answer for ${h}`,
  EDNS: (h) => `DNS lookup of ${h} failed`,
};

function toResolveError(err: unknown, hostname: string, family: 4 | 6): ResolveError {
  const raw = (err as { code?: unknown } | null)?.code;
  const code: ResolveErrorCode =
    raw === 'ENOTFOUND' || raw === 'ENODATA' || raw === 'ETIMEOUT' || raw === 'ESERVFAIL' || raw === 'EREFUSED'
      ? raw
      : 'EDNS';
  return new ResolveError(code, hostname, MESSAGES[code](hostname, family), { cause: err });
}

export function resolveErrorFor(code: ResolveErrorCode, hostname: string, family: 4 | 6): ResolveError {
  return new ResolveError(code, hostname, MESSAGES[code](hostname, family));
}

export interface DnsHostResolverOptions {
  timeoutMs?: number;
  tries?: number;
  deadlineMs?: number;
}

/** c-ares through node's dns.promises.Resolver, bound to the given servers. */
export class DnsHostResolver implements HostResolver {
  readonly #resolver: dns.Resolver;
  readonly #deadlineMs: number;

  constructor(servers: readonly HostPort[], opts: DnsHostResolverOptions = {}) {
    if (servers.length === 0) throw new TypeError('DnsHostResolver needs at least one DNS server');
    this.#resolver = new dns.Resolver({ timeout: opts.timeoutMs ?? DNS_TIMEOUT_MS, tries: opts.tries ?? DNS_TRIES });
    this.#resolver.setServers(servers.map(formatServer));
    this.#deadlineMs = opts.deadlineMs ?? DNS_DEADLINE_MS;
  }

  async resolve(hostname: string, family: 4 | 6): Promise<string[]> {
    const query = family === 4 ? this.#resolver.resolve4(hostname) : this.#resolver.resolve6(hostname);
    // Not resolver.cancel() at the deadline: it would cancel every other request's queries on this channel too.
    try {
      return await withDeadline(query, this.#deadlineMs, () => {
        throw resolveErrorFor('ETIMEOUT', hostname, family);
      });
    } catch (err) {
      if (err instanceof ResolveError) throw err;
      throw toResolveError(err, hostname, family);
    }
  }
}
