/** Every default and bound of the TCP ping (docs/checks.md). */

export const PING_DEFAULT_PORT = 443;

/** Connects per ping: default and bounds. */
export const PING_DEFAULT_COUNT = 4;
export const PING_MIN_COUNT = 1;
export const PING_MAX_COUNT = 20;

/** Connect timeout of each probe, seconds: default and bounds. */
export const PING_DEFAULT_TIMEOUT_S = 2;
export const PING_MIN_TIMEOUT_S = 1;
export const PING_MAX_TIMEOUT_S = 10;

/**
 * Time between the starts of two connects, as `ping -i 0.2`: each probe starts on its own
 * schedule, whether or not the one before has been answered, so a silent port costs one timeout
 * and not one per probe. At most timeout / interval probes (50) are in flight, within the
 * dialer's per-request budget.
 */
export const PING_INTERVAL_MS = 200;
