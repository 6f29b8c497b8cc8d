/** Bounds and defaults of the IPv6 tools. */

/** Ports tried, in order of preference, when the caller names none. */
export const IPV6_TEST_PORTS: readonly number[] = [443, 80];

/** Connect timeout per attempt; attempts run in parallel, so this is also the worst case. */
export const IPV6_TEST_TIMEOUT_MS = 5_000;

/** AAAA records tried per target; more would only multiply sockets for the same answer. */
export const IPV6_TEST_MAX_ADDRESSES = 2;

/** Longest input echoed back in a result or message. */
export const IPV6_MAX_INPUT_LENGTH = 200;
