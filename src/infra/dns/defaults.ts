/**
 * Every default and bound of the DNS client and its cache, in one place.
 * Figures are in milliseconds unless the name says seconds (_S) or counts.
 */

/** How long one attempt (one server: UDP, plus TCP when the UDP answer is truncated) may take. */
export const DNS_ATTEMPT_TIMEOUT_MS = 2_000;

/**
 * Attempts per query: the first server, then one retry on the next server in the list (wrapping
 * around, so a single configured server is asked twice). Worst case = attempts x attempt timeout.
 */
export const DNS_ATTEMPTS = 2;

/** Most attempts a caller may ask for. */
export const DNS_MAX_ATTEMPTS = 10;

/** Longest attempt timeout a caller may ask for: keeps a typo from holding a socket for minutes. */
export const DNS_MAX_ATTEMPT_TIMEOUT_MS = 30_000;

/**
 * EDNS(0) UDP payload size we advertise. 1232 is the DNS Flag Day 2020 figure: large enough that
 * most answers fit in one datagram, small enough never to need IP fragmentation.
 */
export const DNS_EDNS_UDP_PAYLOAD = 1_232;

/** Largest DNS message over TCP (the 2-byte length prefix caps it anyway). */
export const DNS_MAX_TCP_MESSAGE_BYTES = 65_535;

/** Cache bound: the oldest-used entries go first beyond this. */
export const DNS_CACHE_MAX_ENTRIES = 10_000;

/**
 * Positive answers live for the smallest TTL in the answer, but never longer than this: a
 * diagnostics tool should show a change soon after it is made.
 */
export const DNS_CACHE_MAX_TTL_S = 300;

/** Negative answers (NXDOMAIN, no data) live for the SOA minimum (RFC 2308), capped here. */
export const DNS_CACHE_NEGATIVE_MAX_TTL_S = 60;

/**
 * Steps (labels read plus compression pointers followed) that decompressing all the names of one
 * message may take. An honest message of DNS_MAX_RECORDS records, each with two names of up to
 * fifteen labels, takes 32,000; a hostile one can make dns-packet take thousands of steps per byte
 * with pointer chains, which is what this bounds (src/infra/dns/decode.ts). A few milliseconds.
 */
export const DNS_MAX_NAME_STEPS = 32_768;

/**
 * Records read from one message, sections together (answers first). dns-packet spends a few
 * microseconds on each, and a 64 KiB message can hold 5,000 of them; honest answers hold tens,
 * a large round-robin a few hundred. Past this the rest are left unread and the answer says so.
 */
export const DNS_MAX_RECORDS = 1_000;
