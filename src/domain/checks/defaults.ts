/** Bounds and defaults of the HTTP and TLS checks (POST /http/check, POST /tls/check). */

/** Whole-check timeout when the caller names none, and its bounds (docs/checks.md: 1–30 s, default 10). */
export const CHECK_DEFAULT_TIMEOUT_S = 10;
export const CHECK_MIN_TIMEOUT_S = 1;
export const CHECK_MAX_TIMEOUT_S = 30;

/** Redirects followed at most (docs/checks.md); one more redirect answer ends the check with an error. */
export const HTTP_MAX_REDIRECTS = 10;

/** Of a body, at most this much is read (counted and hashed, never kept); then the socket is dropped. */
export const HTTP_MAX_BODY_BYTES = 1024 * 1024;

/** A response head (status line and headers) longer than this ends the check (llhttp's HPE_HEADER_OVERFLOW). */
export const HTTP_MAX_HEADER_BYTES = 16 * 1024;

/** The longest URL accepted, and so the longest `Location` followed. */
export const HTTP_MAX_URL_CHARS = 2048;

export const HTTP_USER_AGENT = 'netdiag-http-check/1';

/** The port the TLS check connects to when the caller names none. */
export const TLS_DEFAULT_PORT = 443;

/** Certificates listed in `chain` at most: a server sending more is cut short, not believed. */
export const TLS_MAX_CHAIN = 10;

/** ALPN protocols offered by the TLS check; the server's pick is `alpn`. */
export const TLS_ALPN_OFFER: readonly string[] = ['h2', 'http/1.1'];

/** Addresses of one name tried one after another before the check gives up connecting. */
export const CHECK_MAX_ADDRESSES = 4;
