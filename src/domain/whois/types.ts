import type { Socket } from 'node:net';

/**
 * What the WHOIS client needs from the dialer (../dialer.ts): resolve a host through
 * the target policy, then connect to an address it returned. Declared here, structurally, so the
 * domain does not depend on the dialer's module; the real Dialer satisfies it with
 * A = CheckedAddress, which also keeps unchecked strings out of connect().
 */
export interface WhoisDialer<A extends string = string> {
  resolve(target: string, opts?: { field?: string }): Promise<{ addresses: readonly A[] }>;
  connect(address: A, port: number, opts: { timeoutMs: number; signal?: AbortSignal }): Promise<Socket>;
}

export interface WhoisServerAddress {
  host: string;
  port: number;
}

/** One server asked, as reported in `hops`. */
export interface WhoisHopReport {
  /** "host" (port 43) or "host:port". */
  server: string;
  /** ok: a complete answer; truncated: cut at the size cap; timeout / failed: see error. */
  status: 'ok' | 'truncated' | 'timeout' | 'failed';
  error: string | null;
  bytes: number;
  /** Milliseconds, two decimals at most. */
  response_time: number;
}

/** The fields read from one WHOIS answer. */
export interface WhoisFields {
  /** The domain the answer is about, as the server wrote it (null when it names none). */
  domain: string | null;
  /** false: the server says it is not registered; true: it describes the domain; null: cannot tell. */
  registered: boolean | null;
  registrar: string | null;
  registrar_url: string | null;
  whois_server: string | null;
  /** ISO 8601 UTC, "2024-01-02T03:04:05Z". */
  creation_date: string | null;
  updated_date: string | null;
  expiration_date: string | null;
  /** Lowercase, no trailing dot, no duplicates. */
  name_servers: string[];
  /** EPP codes (clientTransferProhibited) or the registry's own words (connect), without URLs. */
  status: string[];
  /** true: signed (signedDelegation, DS/DNSKEY data); false: unsigned; null: not stated. */
  dnssec: boolean | null;
}

export interface WhoisResult extends Omit<WhoisFields, 'domain'> {
  /** The domain asked for: ASCII (punycode), lowercase. */
  domain: string;
  /**
   * The answers of every server that answered about the domain (registry first, then
   * registrar), each introduced by a "% whois server: host" line; when none did, the last
   * answer received (e.g. IANA's); "" when no server answered.
   */
  raw: string;
  /** Every server asked, in order. */
  hops: WhoisHopReport[];
  /** Why the answer is incomplete (a server failed or was silent), or null. */
  error: string | null;
}
