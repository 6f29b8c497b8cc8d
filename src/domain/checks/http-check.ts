import { createHash } from 'node:crypto';
import type http from 'node:http';
import type net from 'node:net';
import { performance } from 'node:perf_hooks';
import type tls from 'node:tls';
import type { Connector } from '../connector.js';
import type { Dialer } from '../dialer.js';
import { AppError, DialError, ResolveError, TargetForbiddenError, ValidationError } from '../../errors.js';
import { unlessAborted } from '../../lib/deadline.js';
import { round2 } from '../../lib/round.js';
import { hostOf, portOf } from '../../lib/url.js';
import { handshake, handshakeFailure, sniFor } from './handshake.js';
import { CHECK_DEFAULT_TIMEOUT_S, CHECK_MAX_ADDRESSES, HTTP_MAX_BODY_BYTES, HTTP_MAX_HEADER_BYTES, HTTP_MAX_REDIRECTS, HTTP_MAX_URL_CHARS, HTTP_USER_AGENT } from './defaults.js';

/**
 * POST /http/check: one request (and the redirects it leads to), every hop resolved and checked
 * by the target policy and sent over a socket from the dialer to the checked address (the
 * connector's, src/domain/connector.ts). node:http only frames the request on that socket; it
 * never resolves, connects or pools by itself. The
 * body is counted and hashed up to HTTP_MAX_BODY_BYTES and never kept; the head is bounded by
 * HTTP_MAX_HEADER_BYTES (llhttp refuses more).
 */

export type HttpMethod = 'GET' | 'HEAD';

export interface HttpCheckInput {
  url: string;
  method?: HttpMethod | undefined;
  follow_redirects?: boolean | undefined;
  /** Seconds for the whole check, every hop included. */
  timeout?: number | undefined;
}

export interface HttpTimings {
  /** ms from the start of the final request (curl -w time_namelookup, time_connect, time_appconnect, time_starttransfer). */
  dns: number | null;
  connect: number | null;
  tls: number | null;
  ttfb: number | null;
  /** ms from the start of the check to the end of the last body, redirects included (curl's time_total). */
  total: number;
  /** ms spent on the redirects before the final request started (curl's time_redirect). */
  redirect: number;
}

export interface HttpCheckResult {
  url: string;
  final_url: string;
  ip: string | null;
  status: number | null;
  http_version: string | null;
  redirects: Array<{ url: string; status: number; location: string }>;
  timings: HttpTimings;
  headers: Record<string, string>;
  body_bytes: number;
  body_sha256: string | null;
  /** More body came than HTTP_MAX_BODY_BYTES: the rest was never read. */
  body_truncated: boolean;
  tls: { protocol: string | null; cipher: string | null } | null;
  error: string | null;
}

export interface HttpCheckDeps {
  dialer: Pick<Dialer, 'resolve'>;
  connector: Connector;
  /** Node's roots plus NETDIAG_EXTRA_CA_CERTS (trust.ts). */
  context: tls.SecureContext;
}

const REDIRECTS: ReadonlySet<number> = new Set([301, 302, 303, 307, 308]);

/** Why a URL is not one the check requests, or null. */
function urlProblem(url: URL): string | null {
  if (url.protocol !== 'http:' && url.protocol !== 'https:') return 'must be an http:// or https:// URL';
  if (url.hostname === '') return 'must name a host';
  if (url.username !== '' || url.password !== '') return 'must not carry a user name or password';
  if (url.href.length > HTTP_MAX_URL_CHARS) return `must be at most ${HTTP_MAX_URL_CHARS} characters`;
  return null;
}

/** The URL a request asks for, or ValidationError(field). */
export function parseCheckUrl(text: string, field = 'url'): URL {
  let url: URL;
  try {
    url = new URL(text.trim());
  } catch {
    throw new ValidationError(field, 'must be an absolute http:// or https:// URL, e.g. https://example.com/');
  }
  const problem = urlProblem(url);
  if (problem !== null) throw new ValidationError(field, problem);
  return url;
}

/** One request and its answer. Times are ms from the hop's start, slot waits left out. */
interface Hop {
  ip: string | null;
  status: number | null;
  httpVersion: string | null;
  headers: Record<string, string>;
  location: string | null;
  bodyBytes: number;
  sha256: string | null;
  truncated: boolean;
  tls: { protocol: string | null; cipher: string | null } | null;
  marks: { dns: number | null; connect: number | null; tls: number | null; ttfb: number | null };
  error: string | null;
  /** performance.now() when the hop's answer was complete (the body's last byte, the head of a followed redirect); the socket's teardown comes after. */
  doneAt?: number;
}

/** Response headers, names lowercased, repeated ones joined as RFC 9110 5.3 allows. */
function headersOf(raw: readonly string[]): Record<string, string> {
  const joined = new Map<string, string>();
  for (let i = 0; i + 1 < raw.length; i += 2) {
    const name = raw[i]!.toLowerCase();
    const value = raw[i + 1]!;
    const before = joined.get(name);
    joined.set(name, before === undefined ? value : `${before}, ${value}`);
  }
  return Object.fromEntries(joined);
}

function describeRequestError(err: NodeJS.ErrnoException): string {
  const code = err.code ?? '';
  if (code === 'HPE_HEADER_OVERFLOW') return `response head larger than ${HTTP_MAX_HEADER_BYTES} bytes`;
  if (code.startsWith('HPE_')) return 'answered with something that is not HTTP/1.x';
  if (code === 'ECONNRESET') return 'connection closed before a response';
  return `request failed (${code || 'error'})`;
}

export async function checkHttp(deps: HttpCheckDeps, input: HttpCheckInput, signal: AbortSignal): Promise<HttpCheckResult> {
  const first = parseCheckUrl(input.url);
  const follow = input.follow_redirects ?? true;
  const timeoutS = input.timeout ?? CHECK_DEFAULT_TIMEOUT_S;
  const started = performance.now();
  const deadline = started + timeoutS * 1000;
  const expired = AbortSignal.timeout(timeoutS * 1000);
  const both = AbortSignal.any([signal, expired]);

  const redirects: HttpCheckResult['redirects'] = [];
  const method: HttpMethod = input.method ?? 'GET';
  let url = first;
  let hopStart = started;
  let hop: Hop;
  let error: string | null = null;
  for (;;) {
    hopStart = redirects.length === 0 ? started : performance.now();
    hop = await requestOnce(deps, url, method, redirects.length === 0, deadline, both, follow, timeoutS);
    signal.throwIfAborted();
    error = hop.error;
    if (error !== null || !follow || hop.status === null || !REDIRECTS.has(hop.status) || hop.location === null) break;
    let next: URL;
    try {
      next = new URL(hop.location, url);
    } catch {
      error = 'redirect to a Location that is not a URL';
      break;
    }
    const problem = urlProblem(next);
    if (problem !== null) {
      error = `redirect to ${next.href.slice(0, 200)} not followed: the URL ${problem}`;
      break;
    }
    if (redirects.length === HTTP_MAX_REDIRECTS) {
      error = `stopped after ${HTTP_MAX_REDIRECTS} redirects`;
      break;
    }
    redirects.push({ url: url.href, status: hop.status, location: next.href });
    // The method stays: only GET and HEAD are sent, and RFC 9110 15.4 keeps both on every redirect (a 303 included).
    next.hash = '';
    url = next;
  }
  // curl's time_total: the end of the transfer, not of closing the connection.
  const ended = hop.doneAt ?? performance.now();
  return {
    url: first.href,
    final_url: url.href,
    ip: hop.ip,
    status: hop.status,
    http_version: hop.httpVersion,
    redirects,
    timings: {
      dns: hop.marks.dns,
      connect: hop.marks.connect,
      tls: hop.marks.tls,
      ttfb: hop.marks.ttfb,
      total: round2(ended - started),
      redirect: round2(hopStart - started),
    },
    headers: hop.headers,
    body_bytes: hop.bodyBytes,
    body_sha256: hop.sha256,
    body_truncated: hop.truncated,
    tls: hop.tls,
    error,
  };
}

/**
 * One hop: resolve and check, connect, TLS, request, head, body (unless it is a redirect that
 * will be followed). Failures are the hop's `error`; only a forbidden first target (403), a
 * bug, or the caller's abort throw.
 */
async function requestOnce(
  deps: HttpCheckDeps,
  url: URL,
  method: HttpMethod,
  isFirst: boolean,
  deadline: number,
  signal: AbortSignal,
  follow: boolean,
  timeoutS: number,
): Promise<Hop> {
  let start = performance.now();
  const since = (): number => round2(performance.now() - start);
  const hop: Hop = {
    ip: null,
    status: null,
    httpVersion: null,
    headers: {},
    location: null,
    bodyBytes: 0,
    sha256: null,
    truncated: false,
    tls: null,
    marks: { dns: null, connect: null, tls: null, ttfb: null },
    error: null,
  };
  let stage = 'resolving';
  let raw: net.Socket | undefined;
  let socket: net.Socket | undefined;
  try {
    let resolved;
    try {
      // The resolver takes no signal: the deadline (or the caller's abort) must not wait for a slow DNS answer.
      resolved = await unlessAborted(deps.dialer.resolve(hostOf(url), { field: 'url' }), signal);
    } catch (err) {
      if (err instanceof ResolveError) return { ...hop, error: err.message };
      // A redirect somewhere forbidden is the answer of the check, not a 403 of the request.
      if (err instanceof TargetForbiddenError && !isFirst) return { ...hop, error: `redirect refused: ${err.message}` };
      throw err;
    }
    hop.marks.dns = since();
    stage = 'connecting';
    const connected = await deps.connector.connect(resolved.addresses, portOf(url), { deadline, signal, maxAddresses: CHECK_MAX_ADDRESSES, noDelay: true });
    raw = socket = connected.socket;
    // Time waiting for a socket slot is the budget's, not the server's: left out of every mark.
    start += connected.queuedMs;
    hop.ip = connected.address;
    hop.marks.connect = since();
    if (url.protocol === 'https:') {
      stage = 'in the TLS handshake';
      const name = resolved.hostname ?? connected.address;
      const shake = await handshake(deps.connector, raw, { name, servername: sniFor(name), context: deps.context, alpn: ['http/1.1'], signal });
      socket = shake.secure;
      // The handshake's end, before the certificate was read (curl's time_appconnect).
      hop.marks.tls = round2(shake.at - start);
      hop.tls = { protocol: shake.secure.getProtocol(), cipher: shake.secure.getCipher()?.name ?? null };
      if (!shake.authorized) return { ...hop, error: `TLS certificate not accepted (${shake.authorizationError})` };
    }
    stage = 'waiting for the response head';
    const { res } = await deps.connector.send(
      socket,
      {
        method,
        path: `${url.pathname}${url.search}`,
        maxHeaderSize: HTTP_MAX_HEADER_BYTES,
        headers: { host: url.host, 'user-agent': HTTP_USER_AGENT, accept: '*/*', connection: 'close' },
      },
      {
        signal,
        onFirstByte: () => {
          hop.marks.ttfb ??= since();
        },
      },
    );
    hop.status = res.statusCode ?? null;
    hop.httpVersion = res.httpVersion;
    hop.headers = headersOf(res.rawHeaders);
    hop.location = typeof res.headers.location === 'string' ? res.headers.location : null;
    if (follow && hop.status !== null && REDIRECTS.has(hop.status) && hop.location !== null) {
      // Its body is of no interest: the next hop is.
      hop.doneAt = performance.now();
      res.destroy();
      return hop;
    }
    stage = 'reading the body';
    const body = await readBody(res, signal, `timed out after ${timeoutS} s ${stage}`);
    return { ...hop, bodyBytes: body.bytes, sha256: body.sha256, truncated: body.truncated, error: body.error, doneAt: body.endedAt };
  } catch (err) {
    if (err instanceof AppError) throw err;
    // The deadline (the caller's own abort is rethrown by checkHttp).
    if (signal.aborted) return { ...hop, error: `timed out after ${timeoutS} s ${stage}` };
    if (err instanceof DialError) return { ...hop, error: err.message };
    if (err instanceof Error && stage === 'in the TLS handshake') return { ...hop, error: handshakeFailure(err) };
    if (err instanceof Error && 'code' in err && stage !== 'connecting') return { ...hop, error: describeRequestError(err as NodeJS.ErrnoException) };
    throw err;
  } finally {
    socket?.destroy();
    raw?.destroy();
  }
}

/** Counts and hashes the body up to HTTP_MAX_BODY_BYTES; never keeps it. */
function readBody(res: http.IncomingMessage, signal: AbortSignal, timedOut: string): Promise<{ bytes: number; sha256: string; truncated: boolean; error: string | null; endedAt: number }> {
  return new Promise((resolve) => {
    const hash = createHash('sha256');
    let bytes = 0;
    let done = false;
    const finish = (truncated: boolean, error: string | null): void => {
      if (done) return;
      done = true;
      const endedAt = performance.now();
      signal.removeEventListener('abort', onAbort);
      res.removeAllListeners('data');
      res.destroy();
      resolve({ bytes, sha256: hash.digest('hex'), truncated, error, endedAt });
    };
    const onAbort = (): void => finish(false, timedOut);
    res.on('data', (chunk: Buffer) => {
      const take = Math.min(chunk.length, HTTP_MAX_BODY_BYTES - bytes);
      if (take > 0) hash.update(take === chunk.length ? chunk : chunk.subarray(0, take));
      bytes += take;
      if (take < chunk.length) finish(true, null);
    });
    res.once('end', () => finish(false, null));
    res.once('aborted', () => finish(false, 'connection closed in the middle of the body'));
    res.once('close', () => finish(false, res.complete ? null : 'connection closed in the middle of the body'));
    if (signal.aborted) onAbort();
    else signal.addEventListener('abort', onAbort, { once: true });
  });
}
