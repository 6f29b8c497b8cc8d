import ipaddr from 'ipaddr.js';
import { ValidationError } from '../../errors.js';

/**
 * Passwords never leave in a response or a log line: `proxy` in results and messages is the
 * input with its password replaced by `***` (`user:***@host:port`, `host:port:user:***`,
 * `socks5://user:***@host:port`). Where the password sits is found the way parse.ts reads the
 * input, and also for input that parse.ts refused, whose error message quotes it.
 */

export const PASSWORD_MASK = '***';

/** Input that starts with `host:port` is the colon form, whose password may hold '@' (as parse.ts reads it). */
const STARTS_WITH_HOST_PORT = /^(\[[^\]]*\]|[^:@[\]]+):\d{1,5}(:|$)/;
const SCHEME = /^[A-Za-z][A-Za-z0-9+.-]*:\/\//;

/** Where the password is in `input` (trimmed), as [start, end), or null when it has none. */
export function passwordSpan(input: string): [number, number] | null {
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

/** How parse.ts quotes an input in a message. */
function quoted(input: string): string {
  return JSON.stringify(input.length > 80 ? `${input.slice(0, 80)}…` : input);
}

/**
 * A validation error about a proxy input, without its password: the quoted input becomes the
 * quoted redacted input, and the password itself, should it appear any other way, is masked too
 * (unless it is shorter than 4 characters, which would mask ordinary words of the message).
 */
export function redactValidationError(err: ValidationError, raw: unknown): ValidationError {
  if (typeof raw !== 'string') return err;
  const input = raw.trim();
  const span = passwordSpan(input);
  if (!span) return err;
  const password = input.slice(span[0], span[1]);
  let message = err.message.split(quoted(input)).join(quoted(redactProxyInput(input)));
  if (password.length >= 4) {
    for (const form of [password, JSON.stringify(password).slice(1, -1), encodeURIComponent(password)]) message = message.split(form).join(PASSWORD_MASK);
  }
  if (message === err.message) return err;
  const field = typeof err.details?.field === 'string' ? err.details.field : 'proxy';
  const prefix = `${field}: `;
  return new ValidationError(field, message.startsWith(prefix) ? message.slice(prefix.length) : message, Object.fromEntries(Object.entries(err.details ?? {}).filter(([k]) => k !== 'field')));
}
