/**
 * Every default and bound of the port scanner (API.md, "Port scanner").
 * Socket budgets sit under the dialer's own (its defaults), which they share with
 * every other tool.
 */

/** Default connect timeout of POST /port/scan, seconds. */
export const SCAN_DEFAULT_TIMEOUT_S = 5;

/** Default connect timeout per port of /port/scan-range and /port/scan-common, seconds. */
export const RANGE_DEFAULT_TIMEOUT_S = 3;

export const MIN_TIMEOUT_S = 1;
export const MAX_TIMEOUT_S = 30;

/** Entries accepted in `ports` (before duplicates are removed); for the string form, ports after expansion. */
export const MAX_PORTS_PER_SCAN = 1_000;

/** Longest `ports` string: 1000 five-digit ports with a comma and a space each, and room to spare. */
export const PORT_SPEC_MAX_CHARS = 10_000;

/** Longest stretch of a `ports` string quoted back in an error message. */
export const PORT_SPEC_ECHO_MAX_CHARS = 40;

/**
 * Connects one scan keeps in flight. 1000 silent ports at the shortest timeout then take two
 * rounds of one second, which is what lets them finish in under three. The dialer caps any
 * per-request limiter at MAX_PER_REQUEST_SOCKETS (512) anyway.
 */
export const SCAN_CONCURRENCY = 512;

/**
 * Connects all scans together keep in flight. Below the dialer's global budget (1024), so
 * however many slow scans run, proxy checks, WHOIS and IPv6 tests still find sockets, and
 * the process stays far from its descriptor limit.
 */
export const SCANS_GLOBAL_SOCKETS = 768;

/**
 * Of those, the most one owner's (account's) scans hold at once. The other 128 are a reserve
 * that only an account holding fewer than SCANS_RESERVED_BELOW may take, so however many
 * accounts scan silent ports, another account's first port never waits for one of theirs to
 * time out. When several accounts wait, a freed slot goes to the one holding the fewest
 * (../connection-limiter.ts).
 */
export const SCANS_PER_OWNER_SOCKETS = 640;

/**
 * "Few": an account whose scans hold fewer sockets than this may take one of the reserve.
 * 128 / 4: 32 accounts at once start their first ports at once, and a small scan of ports that
 * answer keeps 4 connects going through the reserve while the rest of the budget is held.
 */
export const SCANS_RESERVED_BELOW = 4;
