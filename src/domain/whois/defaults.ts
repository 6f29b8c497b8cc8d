/** Every default and bound of the WHOIS client, in one place. */

/** The WHOIS port (RFC 3912). */
export const WHOIS_PORT = 43;

/** rwhois:// referrals without a port (RFC 2167). */
export const RWHOIS_PORT = 4321;

/**
 * Servers asked per lookup: the first (NETDIAG_WHOIS_SERVER, IANA by default) plus at most three
 * referrals. IANA -> registry -> registrar is the usual chain; the third referral leaves room
 * for a registrar that hands over to a reseller, and no more.
 */
export const WHOIS_MAX_HOPS = 4;

/** One server's budget: resolve, connect and read the whole answer (servers close when done). */
export const WHOIS_HOP_TIMEOUT_MS = 5_000;

/** The whole lookup's budget, whatever the number of hops. */
export const WHOIS_TOTAL_TIMEOUT_MS = 12_000;

/**
 * Bytes read from one server before the socket is destroyed. Real answers are a few KiB; the
 * cap keeps a hostile or broken server from filling memory.
 */
export const WHOIS_MAX_RESPONSE_BYTES = 256 * 1024;
