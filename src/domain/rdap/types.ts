/** What the RDAP client needs from the outside world; the infra layer implements both over the one dialer. */

import type { WhoisHopReport } from '../whois/types.js';

export interface RdapHttpResponse {
  status: number;
  /** The Location header of a redirect, as sent (resolved against the request URL by the caller). */
  location: string | null;
  /** The body's bytes, at most `maxBytes` of them. */
  body: Uint8Array;
  bytes: number;
  /** More than `maxBytes` came: the body is cut and the connection was dropped. */
  truncated: boolean;
}

/**
 * One GET, no redirect followed, through the dialer: the URL's host resolved and every address
 * checked by the target policy, the connection made to a checked address. Rejects with
 * TargetForbiddenError (the policy refused), ValidationError (no host), ResolveError, DialError,
 * or the signal's reason.
 */
export interface RdapHttp {
  get(url: URL, opts: { timeoutMs: number; maxBytes: number; signal: AbortSignal; accept: string }): Promise<RdapHttpResponse>;
}

export type BootstrapKind = 'dns' | 'ipv4' | 'ipv6' | 'asn';
export const BOOTSTRAP_KINDS: readonly BootstrapKind[] = ['dns', 'ipv4', 'ipv6', 'asn'];

/** Fetches a fresh bootstrap file's text (NETDIAG_RDAP_BOOTSTRAP: a base URL or a directory); rejects when it cannot. */
export interface BootstrapSource {
  /** Where the files come from, for messages. */
  readonly where: string;
  fetch(kind: BootstrapKind, signal: AbortSignal): Promise<string>;
}

/** One request of a lookup, as reported in `hops`: the WHOIS hops' shape, `server` the URL. */
export type RdapHopReport = WhoisHopReport;
