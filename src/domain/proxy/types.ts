/** The proxy checker's own types; nothing here knows HTTP routes or Fastify. */
import type { EntryError } from '../bulk-entries.js';

export type ProxyProtocol = 'http' | 'https' | 'socks4' | 'socks5';

/** Order of preference when a bare proxy answers to several protocols. */
export const PROTOCOL_PREFERENCE: readonly ProxyProtocol[] = ['http', 'https', 'socks5', 'socks4'];

export type ProxyStatus = 'working' | 'failed' | 'timeout';
export type AnonymityLevel = 'transparent' | 'anonymous' | 'elite';

/** One parsed proxy input. */
export interface ProxySpec {
  /** The input as the user wrote it (trimmed). */
  input: string;
  /** Host without brackets: a hostname, an IPv4 or an IPv6 address. */
  host: string;
  port: number;
  /** Null for a bare `host:port`: every protocol is tried. */
  protocol: ProxyProtocol | null;
  username: string | null;
  password: string | null;
}

/** What the judge saw: the peer address and every header that reached it, in order. */
export interface JudgeEcho {
  /** The nonce of the request, so a check knows the answer came from our judge for it. */
  nonce: string;
  remote_address: string;
  method: string;
  /** [name, value] pairs as received (names keep their case). */
  headers: Array<[string, string]>;
}

/** The judge's answer as sent: the echo, and its HMAC-SHA256 under the judge's key (hex). */
export interface SignedJudgeEcho extends JudgeEcho {
  signature: string;
}

/** The minimal GeoIP reader the checker needs (the GeoReader of ../ip/geoip.ts satisfies it). */
export interface GeoLookup {
  city(ip: string): { country: string | null; country_code: string | null; region: string | null; city: string | null } | null;
  asn(ip: string): { organization: string | null; isp?: string | null } | null;
}

export interface CheckFlags {
  ssl: boolean;
  anonymity: boolean;
  speed: boolean;
  location: boolean;
}

export const ALL_CHECKS: CheckFlags = { ssl: true, anonymity: true, speed: true, location: true };

export interface ProxyLocation {
  country: string | null;
  country_code: string | null;
  city: string | null;
  region: string | null;
  isp: string | null;
}

export interface ProxySpeed {
  /**
   * `"<number> Mbps"`, `"too fast to measure"` when the transfer took under SPEED_MIN_TIMED_MS,
   * null when that half of the test did not finish.
   */
  download: string | null;
  upload: string | null;
  /** `"<number>ms"`: time to the first byte of a request relayed through the open tunnel. */
  latency: string | null;
}

/** How one step of the check went; `error` says why when it is not ok. */
export interface StepReport {
  status: 'ok' | 'failed' | 'timeout';
  error: string | null;
  /** ms, two decimals. */
  time: number;
}

export interface ProxyCheckResult {
  proxy: string;
  host: string;
  port: number;
  status: ProxyStatus;
  protocol: ProxyProtocol | null;
  /** ms to connect through the proxy and relay a small request to the judge; null unless working. */
  response_time: number | null;
  /** Omitted when check_anonymity is false; null when it could not be judged. */
  anonymity_level?: AnonymityLevel | null;
  /** Headers that revealed the proxy or our address (only with check_anonymity). */
  proxy_headers?: string[];
  ssl_support?: boolean | null;
  location?: ProxyLocation | null;
  speed?: ProxySpeed | null;
  /** The address the judge saw the request come from. */
  exit_ip: string | null;
  error: string | null;
  checked_at: string;
  /** Per-step detail: the protocol tries, ssl, speed and anonymity (when asked for). */
  checks: {
    protocol: StepReport & { tried: ProxyProtocol[] };
    anonymity?: StepReport;
    ssl?: StepReport;
    speed?: StepReport;
  };
}

/**
 * A bulk entry that was not checked (docs/api.md, "Bulk calls"): not a valid proxy
 * (no host or port then), or its host is a forbidden target. `status` is failed.
 */
export type ProxyEntryFailure = Omit<ProxyCheckResult, 'host' | 'port'> & Partial<Pick<ProxyCheckResult, 'host' | 'port'>> & EntryError;

export type ProxyBulkItem = ProxyCheckResult | ProxyEntryFailure;
