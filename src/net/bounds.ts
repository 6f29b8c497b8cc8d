/** Bounds of addresses and names, shared by the target policy, the DNS client and the tools. */

/** TCP port numbers a probe may dial (0 is not a destination). */
export const MIN_PORT = 1;
export const MAX_PORT = 65_535;

/** Longest name in presentation form, without the trailing dot (RFC 1035 2.3.4). */
export const DNS_MAX_NAME_LENGTH = 253;

/** Longest label (RFC 1035 2.3.4). */
export const DNS_MAX_LABEL_LENGTH = 63;
