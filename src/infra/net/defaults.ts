/**
 * Every default and bound of the target policy, the resolver and the dialer.
 * Probes (ports, proxy, whois, ipv6) pass their own timeouts; these apply when they do not.
 */

/** TCP connect timeout when a caller gives none. */
export const DEFAULT_CONNECT_TIMEOUT_MS = 5_000;

/**
 * The one socket budget: sockets open at once across every request and tool (port scans,
 * proxy checks, WHOIS, IPv6 tests, webhooks). Dials beyond this wait in a queue rather than
 * fail, so a burst of scans slows down instead of reporting ports as filtered. Kept well
 * under a typical `ulimit -n` so the HTTP server still has descriptors to accept with.
 */
export const MAX_GLOBAL_SOCKETS = 1_024;

/**
 * Of those, the most one owner (account) may hold at once. The other 128 are a reserve for
 * owners holding fewer than RESERVED_BELOW_SOCKETS, so however many accounts flood, an
 * account's first connect never waits behind their slow ones; when several wait, a freed slot
 * goes to the one holding the fewest (src/domain/socket-budget.ts).
 */
export const MAX_PER_OWNER_SOCKETS = 896;

/**
 * "Few": an owner holding fewer sockets than this may take one of the reserve. 128 / 4: 32
 * accounts at once start their first connects at once, and a light one keeps 4 going.
 */
export const RESERVED_BELOW_SOCKETS = 4;

/**
 * The most one request holds at once (`dialer.socketBudget()`), so one request cannot take its
 * account's whole share. A port scan takes this many: 1000 silent ports at the shortest
 * timeout then take two rounds of one second, which lets them finish in under three.
 */
export const MAX_PER_REQUEST_SOCKETS = 512;

/** Per-try DNS timeout handed to c-ares; it backs off between tries. */
export const DNS_TIMEOUT_MS = 2_000;

/** DNS tries per server before c-ares gives up. */
export const DNS_TRIES = 2;

/**
 * Our own deadline for one name's lookup, because c-ares' backoff across several servers can
 * otherwise run well past what an HTTP client will wait for.
 */
export const DNS_DEADLINE_MS = 6_000;

/** A name that resolves to more addresses than this is cut down (all kept ones are checked). */
export const MAX_ADDRESSES_PER_FAMILY = 16;
