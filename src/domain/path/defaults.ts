/**
 * Every default and bound of the path tools, ICMP ping, traceroute and mtr (docs/path-tools.md).
 * The programs' own argument lists, deadlines and output bounds live with the runner
 * (in the infra layer; docs/path-tools.md); these are what a caller may ask for.
 */

/** Echo requests of one ping: default and bounds. */
export const PING_DEFAULT_PACKETS = 4;
export const PING_MIN_PACKETS = 1;
export const PING_MAX_PACKETS = 16;

/** Probes per TTL of a traceroute: default and bounds. */
export const TRACEROUTE_DEFAULT_QUERIES = 3;
export const TRACEROUTE_MIN_QUERIES = 1;
export const TRACEROUTE_MAX_QUERIES = 3;

/** The highest TTL probed by traceroute and mtr: default and bounds. */
export const PATH_DEFAULT_MAX_HOPS = 30;
export const PATH_MIN_MAX_HOPS = 1;
export const PATH_MAX_MAX_HOPS = 30;

/** Probes per hop of an mtr report (its cycles): default and bounds. */
export const MTR_DEFAULT_PACKETS = 10;
export const MTR_MIN_PACKETS = 1;
export const MTR_MAX_PACKETS = 16;

/** The protocols traceroute and mtr probe with; ping is always ICMP. */
export const PATH_PROTOCOLS = ['icmp', 'udp', 'tcp'] as const;
export const PATH_DEFAULT_PROTOCOL = 'icmp';

/**
 * Destination port of UDP and TCP probes when none is given: 33434, the classic first traceroute
 * port (nothing listens there, so the target answers "port unreachable"), and 80 for TCP (a
 * listener answers SYN-ACK, a closed port RST: either way the target is reached).
 */
export const PATH_DEFAULT_UDP_PORT = 33_434;
export const PATH_DEFAULT_TCP_PORT = 80;

/** How long each hop's PTR may take before its `hostname` is null. */
export const HOP_PTR_DEADLINE_MS = 1_000;

/**
 * The one process budget: path tool programs running at once on this server, whatever account
 * asked. A call beyond it waits for a slot (an abort leaves the queue at once) rather than fail.
 * Each process holds a few raw sockets and little memory; the bound is there so that a burst of
 * calls cannot fork without limit.
 */
export const PATH_MAX_PROCESSES = 16;

/**
 * Of those, the most one owner (account) may run at once. The other 4 are a reserve for owners
 * running none (PATH_RESERVED_BELOW), so however many accounts flood, another account's first
 * call starts once one of the reserve's processes ends; when several wait, a freed slot goes to
 * the one running the fewest (src/domain/socket-budget.ts).
 */
export const PATH_MAX_PER_OWNER_PROCESSES = 12;
export const PATH_RESERVED_BELOW_PROCESSES = 1;
