/**
 * Every default and bound of IP lookup, in one place. Figures are milliseconds unless the
 * name says otherwise. The DNS client's own per-attempt timeouts live with the DNS client;
 * the deadlines here bound what an IP lookup waits for, whatever the client does.
 */

/** Most addresses in one bulk lookup (the specification's bound; the HTTP schema enforces it too). */
export const IP_BULK_MAX = 100;

/** Longer than any spelling of an address (IPv6 with a zone id included), short of a flood. */
export const IP_INPUT_MAX_CHARS = 100;

/**
 * Bulk items looked up at once. Equal to the bulk bound: with security_check every item waits
 * for its slowest DNS list, so batching would multiply that wait; the queries are small UDP
 * packets and identical ones are shared by the DNS client.
 */
export const IP_BULK_CONCURRENCY = 100;

/** How long the PTR lookup of `detailed` may take before hostname is reported as null. */
export const PTR_TIMEOUT_MS = 1_500;

/**
 * How long each DNS-based security check (Tor exit list, each DNSBL) may take before it is
 * reported as unknown (null). They run concurrently, so this is also the most security_check
 * adds to a lookup.
 */
export const SECURITY_DNS_TIMEOUT_MS = 2_000;

/**
 * The Tor Project's exit list served over DNS (TorDNSEL): `<reversed IPv4>.dnsel.torproject.org`
 * answers 127.0.0.2 for an exit relay and NXDOMAIN otherwise; other 127/8 answers except
 * 127.0.0.1 are reserved and "should be interpreted as indicating an exit node"
 * (https://www.torproject.org/projects/tordnsel.html.en). It lists IPv4 exits only, so an IPv6
 * address is reported as unknown rather than "not an exit".
 */
export const TOR_DNSEL_ZONE = 'dnsel.torproject.org';

/**
 * DNSBL answers that are not listings. Spamhaus answers 127.255.255.252-255 for errors (typo
 * in the zone, query through a public resolver, rate limit) and some resolvers rewrite NXDOMAIN
 * to an ad server: only answers in 127.0.0.0/8 outside 127.255.255.0/24 count (RFC 5782 2.3).
 */
export const DNSBL_ERROR_PREFIX = '127.255.255.';

/**
 * Per-zone answers that mark a policy listing rather than abuse: Spamhaus PBL (in zen) lists
 * end-user ranges that should not send mail directly, i.e. nearly every home connection.
 * Counting it would call every residential address "blacklisted".
 */
export const DNSBL_POLICY_ANSWERS: Readonly<Record<string, readonly string[]>> = {
  'zen.spamhaus.org': ['127.0.0.10', '127.0.0.11'],
  'pbl.spamhaus.org': ['127.0.0.10', '127.0.0.11'],
};

/**
 * Listings that mean "open proxy or exploited host acting as one", for is_proxy: Spamhaus XBL
 * (in zen: 127.0.0.4-7) and zones that list only proxies.
 */
export const DNSBL_PROXY_ANSWERS: Readonly<Record<string, readonly string[] | '*'>> = {
  'zen.spamhaus.org': ['127.0.0.4', '127.0.0.5', '127.0.0.6', '127.0.0.7'],
  'xbl.spamhaus.org': '*',
  'http.dnsbl.sorbs.net': '*',
  'socks.dnsbl.sorbs.net': '*',
  'misc.dnsbl.sorbs.net': '*',
  'dnsbl.tornevall.org': '*',
};

/** risk_score points; see docs/risk-score.md. The sum is capped at RISK_MAX. */
export const RISK_POINTS = {
  torExit: 60,
  /** A proxy listing other than Tor (Tor already scores as tor_exit). */
  proxy: 40,
  /** Each DNSBL that lists the address for abuse... */
  perListing: 20,
  /** ...up to this much from listings together. */
  listingsMax: 60,
  hosting: 10,
  bogon: 10,
} as const;

export const RISK_MAX = 100;
