import ipaddr from 'ipaddr.js';
import { MAX_PROXY_INPUT_LENGTH } from './defaults.js';

/**
 * Passwords never leave in a response or a log line: `proxy` in results and messages is the
 * input with its password replaced by `***` (`user:***@host:port`, `host:port:user:***`,
 * `socks5://user:***@host:port`). Where the password sits is found the way parse.ts reads the
 * input, and also for input that parse.ts refuses, whose error message quotes it (redacted).
 */

const PASSWORD_MASK = '***';

/** Input that starts with `host:port` is the colon form, whose password may hold '@' (as parse.ts reads it). */
export const STARTS_WITH_HOST_PORT = /^(\[[^\]]*\]|[^:@[\]]+):\d{1,5}(:|$)/;
const SCHEME = /^[A-Za-z][A-Za-z0-9+.-]*:\/\//;

/** Where the password is in `input` (trimmed), as [start, end), or null when it has none. */
function passwordSpan(input: string): [number, number] | null {
  const scheme = SCHEME.exec(input);
  if (scheme || (!STARTS_WITH_HOST_PORT.test(input) && input.includes('@'))) {
    // user:pass@host: the last '@' ends the credentials and the first ':' before it starts the password.
    const from = scheme ? scheme[0].length : 0;
    const at = input.lastIndexOf('@');
    if (at < from) return null;
    const colon = input.indexOf(':', from);
    return colon >= 0 && colon < at ? [colon + 1, at] : null;
  }
  // host:port:user:pass: the password is whatever follows the third separator.
  let after = 0;
  if (input.startsWith('[')) {
    after = input.indexOf(']');
    if (after < 0) return null;
  } else if (ipaddr.IPv6.isValid(input) || ipaddr.IPv6.isValid(input.slice(0, input.lastIndexOf(':')))) {
    // An IPv6 address without brackets (a mistake parse.ts names): its colons are not separators.
    return null;
  }
  for (let i = 0; i < 3; i++) {
    after = input.indexOf(':', after + 1);
    if (after < 0) return null;
  }
  return [after + 1, input.length];
}

/** The input as it may be shown: its password, if any, replaced by `***`. */
export function redactProxyInput(input: string): string {
  const span = passwordSpan(input);
  return span ? input.slice(0, span[0]) + PASSWORD_MASK + input.slice(span[1]) : input;
}

/**
 * `proxy` of a result: the input redacted. An input longer than any proxy (a refused bulk entry,
 * up to the 1 MiB body) is not echoed at all: it is no proxy, and finding where its password
 * would be costs time for nothing.
 */
export function shownProxyInput(input: string): string {
  return input.length > MAX_PROXY_INPUT_LENGTH ? `(${input.length} characters, more than a proxy can have: not shown)` : redactProxyInput(input);
}
