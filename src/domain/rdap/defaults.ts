/** Every default and bound of the RDAP client (RFC 9224 bootstrap, RFC 9083 answers), in one place. */

/** Bytes of one RDAP answer read before the connection is dropped: real answers are a few KiB. */
export const RDAP_MAX_RESPONSE_BYTES = 1024 * 1024;

/**
 * Characters of an answer's text kept as `raw`: real answers are 2-30 KiB, and a megabyte of
 * someone's JSON is not worth writing into every response (and escaping on the event loop).
 */
export const RDAP_MAX_RAW_CHARS = 64 * 1024;

/** Bytes of one bootstrap file (IANA's dns.json is some 40 KiB, the others a few). */
export const RDAP_BOOTSTRAP_MAX_BYTES = 1024 * 1024;

/**
 * Nesting of arrays and objects an answer may have, counted before JSON.parse: a domain with its
 * registrar entity, that entity's abuse entity and its jCard address is some 10 levels deep.
 */
export const RDAP_MAX_JSON_DEPTH = 32;

/** Nesting a bootstrap file may have: `{"services": [[[entries], [urls]]]}` is 4 levels deep. */
export const RDAP_BOOTSTRAP_MAX_JSON_DEPTH = 8;

/** Redirects followed per request (an RIR answering for another's space redirects once). */
export const RDAP_MAX_REDIRECTS = 3;

/** One request: resolve, connect, TLS and the whole answer, per hop. */
export const RDAP_REQUEST_TIMEOUT_MS = 6_000;

/** A whole lookup (registry, redirects, registrar), whatever the number of requests. */
export const RDAP_TOTAL_TIMEOUT_MS = 12_000;

/** Fetched bootstrap files are used this long before they are fetched again (RFC 9224 10: a day is polite). */
export const RDAP_BOOTSTRAP_TTL_MS = 24 * 60 * 60 * 1000;

/** After a failed fetch the shipped snapshot (or the last good file) is used, and the fetch retried after this. */
export const RDAP_BOOTSTRAP_RETRY_MS = 10 * 60 * 1000;

/** A bootstrap fetch (directory read or HTTP) gets this long; lookups meanwhile wait at most as long. */
export const RDAP_BOOTSTRAP_TIMEOUT_MS = 5_000;

/** Where the bootstrap files come from when NETDIAG_RDAP_BOOTSTRAP is unset. */
export const RDAP_BOOTSTRAP_DEFAULT = 'https://data.iana.org/rdap/';

/** Services of one bootstrap file read (IANA's dns.json has some 1,200 entries in ~600 services). */
export const RDAP_BOOTSTRAP_MAX_SERVICES = 5_000;
/** Entries (TLDs, CIDRs, AS ranges) of one bootstrap file read. */
export const RDAP_BOOTSTRAP_MAX_ENTRIES = 20_000;

/** Entities of one answer read (nested ones included), breadth first. */
export const RDAP_MAX_ENTITIES = 64;
/** Nesting of entities read (the registrar's abuse contact is the second level). */
export const RDAP_MAX_ENTITY_DEPTH = 3;
/** Items of any one list read (name servers, statuses, events, links, jCard properties). */
export const RDAP_MAX_LIST = 100;
/** Characters of any one string field kept. */
export const RDAP_MAX_FIELD_CHARS = 1024;
/** CIDR blocks reported for one network. */
export const RDAP_MAX_CIDRS = 32;

export const RDAP_ACCEPT = 'application/rdap+json, application/json;q=0.9';
