import ipaddr from 'ipaddr.js';
import { ValidationError } from '../../errors.js';
import { parseTarget } from '../../net/target.js';
import { MAX_CREDENTIAL_BYTES, MAX_PROXY_INPUT_LENGTH } from './defaults.js';
import type { ProxyProtocol, ProxySpec } from './types.js';
import { STARTS_WITH_HOST_PORT, redactProxyInput } from './redact.js';

/**
 * Every proxy spelling of docs/proxy.md:
 *   host:port                          bare: every protocol is tried
 *   host:port:user:pass                the usual proxy-list form (the password may contain ':')
 *   user:pass@host:port                (the password may contain '@'; the last '@' separates)
 *   scheme://[user:pass@]host:port     http | https | socks4 | socks5 (socks4a, socks5h alike);
 *                                      credentials percent-decoded as in any URL
 * IPv6 hosts go in brackets in every form. Anything else is a ValidationError naming `field`.
 */

const FORMS = 'use host:port, host:port:user:pass, user:pass@host:port or http|https|socks4|socks5://[user:pass@]host:port, with IPv6 hosts in brackets';

const SCHEMES: Record<string, ProxyProtocol> = {
  http: 'http',
  https: 'https',
  socks4: 'socks4',
  socks4a: 'socks4',
  socks5: 'socks5',
  socks5h: 'socks5',
};

function show(input: string): string {
  return JSON.stringify(input.length > 80 ? `${input.slice(0, 80)}…` : input);
}

/** A refusal that quotes the input, with its password (if any) shown as ***: messages reach clients and logs. */
function bad(field: string, input: string, why: string): ValidationError {
  return new ValidationError(field, `${show(redactProxyInput(input))} ${why}; ${FORMS}`);
}

function parsePort(field: string, input: string, text: string | undefined): number {
  if (text === undefined || !/^\d{1,5}$/.test(text)) throw bad(field, input, `has no port number${text ? ` (found ${show(text)})` : ''}`);
  const port = Number(text);
  if (port < 1 || port > 65535) throw new ValidationError(field, `port must be 1-65535, got ${port}`);
  return port;
}

/** `host:port` or `[v6]:port`; the host is checked as a probe target would be (no DNS yet). */
function parseHostPort(field: string, input: string, text: string): { host: string; port: number } {
  let host: string;
  let portText: string | undefined;
  if (text.startsWith('[')) {
    const close = text.indexOf(']');
    if (close < 0) throw bad(field, input, "opens '[' without closing it");
    host = text.slice(1, close);
    const rest = text.slice(close + 1);
    if (!rest.startsWith(':')) throw bad(field, input, 'has no port after the bracketed IPv6 host');
    portText = rest.slice(1);
    if (!host.includes(':')) throw bad(field, input, 'brackets only an IPv6 address');
  } else {
    const parts = text.split(':');
    if (parts.length > 2) throw bad(field, input, 'looks like an IPv6 address without brackets');
    host = parts[0]!;
    portText = parts[1];
  }
  if (host === '') throw bad(field, input, 'has no host');
  const port = parsePort(field, input, portText);
  parseTarget(host, field);
  return { host, port };
}

function checkCredential(field: string, what: 'username' | 'password', value: string): string {
  if (Buffer.byteLength(value, 'utf8') > MAX_CREDENTIAL_BYTES) {
    throw new ValidationError(field, `${what} must be at most ${MAX_CREDENTIAL_BYTES} bytes`);
  }
  // A CR or LF would end the Proxy-Authorization header early and inject another one.
  if (/[\u0000-\u001f\u007f]/.test(value)) throw new ValidationError(field, `${what} must not contain control characters`);
  return value;
}

function decode(field: string, what: 'username' | 'password', value: string): string {
  try {
    return decodeURIComponent(value);
  } catch {
    throw new ValidationError(field, `${what} has a malformed %-escape`);
  }
}

/** `user[:pass]` before an '@'; the first ':' separates, so the password may hold more. */
function parseUserinfo(field: string, text: string, percentEncoded: boolean): { username: string; password: string | null } {
  const colon = text.indexOf(':');
  let username = colon < 0 ? text : text.slice(0, colon);
  let password: string | null = colon < 0 ? null : text.slice(colon + 1);
  if (percentEncoded) {
    username = decode(field, 'username', username);
    password = password === null ? null : decode(field, 'password', password);
  }
  if (username === '') throw new ValidationError(field, 'username must not be empty when credentials are given');
  return { username: checkCredential(field, 'username', username), password: password === null ? null : checkCredential(field, 'password', password) };
}

function withUserinfo(field: string, input: string, text: string, protocol: ProxyProtocol | null, percentEncoded: boolean): ProxySpec {
  const at = text.lastIndexOf('@');
  const creds = at < 0 ? { username: null, password: null } : parseUserinfo(field, text.slice(0, at), percentEncoded);
  const { host, port } = parseHostPort(field, input, at < 0 ? text : text.slice(at + 1));
  return { input, host, port, protocol, ...creds };
}

export function parseProxy(raw: unknown, field = 'proxy'): ProxySpec {
  if (typeof raw !== 'string') throw new ValidationError(field, 'must be a string');
  const input = raw.trim();
  if (input === '') throw new ValidationError(field, `must not be empty; ${FORMS}`);
  if (input.length > MAX_PROXY_INPUT_LENGTH) throw new ValidationError(field, `must be at most ${MAX_PROXY_INPUT_LENGTH} characters`);
  if (/\s/.test(input)) throw bad(field, input, 'contains white space');

  const scheme = /^([A-Za-z][A-Za-z0-9+.-]*):\/\/(.*)$/.exec(input);
  if (scheme) {
    const protocol = SCHEMES[scheme[1]!.toLowerCase()];
    if (!protocol) throw new ValidationError(field, `scheme ${show(scheme[1]!)} is not supported; use http, https, socks4 or socks5`);
    // A trailing '/' is how many tools print proxy URLs; a real path or query is not a proxy.
    const rest = scheme[2]!.endsWith('/') ? scheme[2]!.slice(0, -1) : scheme[2]!;
    if (/[/?#]/.test(rest)) throw bad(field, input, 'has a path, query or fragment');
    return withUserinfo(field, input, rest, protocol, true);
  }
  // host:port first means the colon form, whose password may hold '@'; otherwise an '@' separates credentials.
  const startsWithHostPort = STARTS_WITH_HOST_PORT.test(input);
  if (!startsWithHostPort && input.includes('@')) return withUserinfo(field, input, input, null, false);

  // host:port[:user:pass] — the host part is bracketed when it is IPv6.
  let hostPort: string;
  let rest: string;
  if (input.startsWith('[')) {
    const close = input.indexOf(']');
    if (close < 0) throw bad(field, input, "opens '[' without closing it");
    const portColon = input.indexOf(':', close);
    const portEnd = portColon < 0 ? -1 : input.indexOf(':', portColon + 1);
    hostPort = portEnd < 0 ? input : input.slice(0, portEnd);
    rest = portEnd < 0 ? '' : input.slice(portEnd + 1);
  } else {
    const parts = input.split(':');
    if (parts.length > 2 && !/^\d{1,5}$/.test(parts[1]!)) {
      const v6 = ipaddr.IPv6.isValid(input) || ipaddr.IPv6.isValid(parts.slice(0, -1).join(':'));
      throw bad(field, input, v6 ? 'looks like an IPv6 address without brackets' : 'has no port number after the host');
    }
    hostPort = parts.slice(0, 2).join(':');
    rest = parts.slice(2).join(':');
  }
  const { host, port } = parseHostPort(field, input, hostPort);
  if (hostPort.length === input.length) return { input, host, port, protocol: null, username: null, password: null };
  const colon = rest.indexOf(':');
  if (colon < 0) throw bad(field, input, 'has a username but no password (host:port:user:pass)');
  const username = rest.slice(0, colon);
  const password = rest.slice(colon + 1);
  if (username === '') throw new ValidationError(field, 'username must not be empty when credentials are given');
  return {
    input,
    host,
    port,
    protocol: null,
    username: checkCredential(field, 'username', username),
    password: checkCredential(field, 'password', password),
  };
}

/** `host:port` with IPv6 in brackets, for messages. */
export function hostPortText(host: string, port: number): string {
  return host.includes(':') ? `[${host}]:${port}` : `${host}:${port}`;
}
