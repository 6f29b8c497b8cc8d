/**
 * Every default and bound of the port scanner (docs/ports.md).
 * Its sockets come out of the dialer's one budget (the infra layer's net defaults), shared with
 * every other tool: a scan holds at most the dialer's per-request maximum, an account its share.
 */

/** Default connect timeout of POST /port/scan, seconds. */
export const SCAN_DEFAULT_TIMEOUT_S = 5;

/** Default connect timeout per port of /port/scan-range and /port/scan-common, seconds. */
export const RANGE_DEFAULT_TIMEOUT_S = 3;

export const MIN_TIMEOUT_S = 1;
export const MAX_TIMEOUT_S = 30;

/**
 * Entries accepted in `ports` of a synchronous call (before duplicates are removed); for the
 * string form, ports after expansion.
 */
export const MAX_PORTS_PER_SCAN = 1_000;

/**
 * The same bound for a job (Prefer: respond-async): every port, "1-65535" (docs/ports.md, "Jobs and
 * webhooks"). Its items are streamed to the job's store as they complete and kept nowhere else.
 */
export const MAX_PORTS_PER_JOB = 65_535;

/** Longest `ports` string: 1000 five-digit ports with a comma and a space each, and room to spare. */
export const PORT_SPEC_MAX_CHARS = 10_000;

/** Longest stretch of a `ports` string quoted back in an error message. */
export const PORT_SPEC_ECHO_MAX_CHARS = 40;
