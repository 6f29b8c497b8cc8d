/** Bounds of the DNS lookup tool (the client's own timeouts and cache live with the client). */

/** Most domains in one bulk lookup (the specification's bound; the HTTP schema enforces it too). */
export const DNS_BULK_MAX_DOMAINS = 50;

/**
 * Distinct names resolved at once in a bulk lookup. Equal to the bulk bound, so a bulk takes as
 * long as its slowest name; UDP queries are cheap and the resolvers are the operator's own.
 */
export const DNS_BULK_CONCURRENCY = 50;

/**
 * The longest domain input read: room for surrounding spaces, a trailing dot and IDN text before
 * the 253 characters of the punycode name are checked, while a megabyte string never reaches them.
 */
export const DNS_INPUT_MAX_CHARS = 300;

/** The record type when the request names none (the specification's default). */
export const DNS_DEFAULT_TYPE = 'A';
