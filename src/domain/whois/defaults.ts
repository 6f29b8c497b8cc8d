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

/**
 * Characters of one answer that are parsed (the raw text is kept whole): as much as the byte cap
 * lets in. Every parser step is linear in this, so it bounds the time a hostile answer costs.
 */
export const WHOIS_MAX_PARSED_CHARS = WHOIS_MAX_RESPONSE_BYTES;

/**
 * Characters of one line that are parsed; the rest of a longer line is ignored. No field we read
 * comes near it (keys are at most 80 characters, values a host, a date, a name, a URL); longer
 * lines are legal prose or junk.
 */
export const WHOIS_MAX_LINE_CHARS = 1024;
