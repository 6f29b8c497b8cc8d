/**
 * Every error of the server, in one place, in two groups:
 * - API errors (AppError): what a client can be answered, each with its HTTP status and `code`,
 *   built from one table of codes. Domain code throws these; the HTTP layer converts them into the
 *   error envelope. docs/errors.md lists the same table and a test keeps the two equal.
 * - Internal errors: thrown and caught inside the server, never sent as themselves.
 * This module imports nothing: every layer may throw what it declares.
 */

export const ERROR_CODES = {
  bad_request: 400,
  validation_error: 400,
  invalid_json: 400,
  unauthorized: 401,
  forbidden: 403,
  target_forbidden: 403,
  not_found: 404,
  method_not_allowed: 405,
  request_timeout: 408,
  conflict: 409,
  payload_too_large: 413,
  unsupported_media_type: 415,
  rate_limit_exceeded: 429,
  headers_too_large: 431,
  internal_error: 500,
  service_unavailable: 503,
} as const;

export type ErrorCode = keyof typeof ERROR_CODES;

/* API errors: each answers with its HTTP status and code. */

export class AppError extends Error {
  readonly code: ErrorCode;
  readonly status: number;
  readonly details: Record<string, unknown> | undefined;
  readonly headers: Record<string, string> | undefined;

  constructor(
    code: ErrorCode,
    message: string,
    details?: Record<string, unknown>,
    headers?: Record<string, string>,
  ) {
    super(message);
    this.name = new.target.name;
    this.code = code;
    this.status = ERROR_CODES[code];
    this.details = details;
    this.headers = headers;
  }
}

/** 400: the request is not well-formed HTTP (request line, headers, chunking, URL encoding). */
export class BadRequestError extends AppError {
  constructor(reason: string) {
    super('bad_request', `the request is not well-formed HTTP/1.1: ${reason}`);
  }
}

/** 408: the request's headers or body did not arrive in time (stalled or trickled). */
export class RequestTimeoutError extends AppError {
  constructor(headersS: number, requestS: number) {
    super(
      'request_timeout',
      `the request did not arrive in time: its headers are due within ${headersS} s and the whole request within ${requestS} s; send them without pausing`,
      { headers_timeout_s: headersS, request_timeout_s: requestS },
    );
  }
}

/** 431: more header bytes than the server reads. */
export class HeadersTooLargeError extends AppError {
  constructor(limitBytes: number) {
    super('headers_too_large', `the request headers are larger than ${limitBytes} bytes; send fewer or shorter headers`, { limit: limitBytes });
  }
}

/** 400: a field broke a rule. The message names the field and the rule: "ports: at most 1000 entries". */
export class ValidationError extends AppError {
  constructor(field: string, rule: string, extra?: Record<string, unknown>) {
    super('validation_error', `${field}: ${rule}`, { field, ...extra });
  }
}

export class InvalidJsonError extends AppError {
  constructor(reason: string) {
    super('invalid_json', `request body is not valid JSON: ${reason}`);
  }
}

export class UnauthorizedError extends AppError {
  constructor(message = 'a valid API token is required: send "Authorization: Bearer <token>"') {
    super('unauthorized', message);
  }
}

export class ForbiddenError extends AppError {
  constructor(message: string) {
    super('forbidden', message);
  }
}

/** 403: a probe target resolved to an address in a blocked range. */
export class TargetForbiddenError extends AppError {
  constructor(target: string, address: string, range: string, rangeType: string, message = `target ${target} resolves to ${address}, which is in the blocked ${rangeType} range ${range}`) {
    super('target_forbidden', message, { target, address, range, type: rangeType });
  }
}

/** 404: what the request names does not exist (an endpoint, an account, a token). The CLI answers it with exit code 2. */
export class NotFoundError extends AppError {
  constructor(message: string) {
    super('not_found', message);
  }

  /** No endpoint at this path, for any method. */
  static endpoint(method: string, path: string): NotFoundError {
    return new NotFoundError(`no endpoint ${method} ${path}; see /api/docs for the list`);
  }
}

export class MethodNotAllowedError extends AppError {
  constructor(method: string, path: string, allowed: string[]) {
    super('method_not_allowed', `${path} does not accept ${method}; use ${allowed.join(' or ')}`, { allowed }, {
      allow: allowed.join(', '),
    });
  }
}

/** 409: the request conflicts with the state of what it names (an e-mail already registered, a finished job). */
export class ConflictError extends AppError {
  constructor(message: string) {
    super('conflict', message);
  }
}

export class PayloadTooLargeError extends AppError {
  constructor(limitBytes: number) {
    super('payload_too_large', `request body is larger than ${limitBytes} bytes`, { limit: limitBytes });
  }
}

export class UnsupportedMediaTypeError extends AppError {
  constructor(contentType: string | undefined) {
    super(
      'unsupported_media_type',
      `request body must be sent as Content-Type: application/json${contentType ? `, not ${contentType}` : ''}`,
    );
  }
}

export class RateLimitError extends AppError {
  constructor(message: string, details: Record<string, unknown>, headers?: Record<string, string>) {
    super('rate_limit_exceeded', message, details, headers);
  }
}

/**
 * 503: something the answer needs cannot be reached now (the database), or the server is going
 * away; `Retry-After` (whole seconds) says when to try again.
 */
export class ServiceUnavailableError extends AppError {
  constructor(message: string, retryAfterS: number) {
    super('service_unavailable', message, { retry_after_s: retryAfterS }, { 'retry-after': String(retryAfterS) });
  }
}

export class InternalError extends AppError {
  constructor() {
    super('internal_error', 'internal error; the request id in X-Request-Id identifies it in the server log');
  }
}

/** 404: a job id this account cannot see. */
export class JobNotFoundError extends NotFoundError {
  constructor() {
    super('no such job: it never existed, belongs to another account, or is past its time to live');
  }
}

/** 409: a rotation now would put a fourth signature on deliveries. */
export class RotationConflictError extends AppError {
  constructor(retryAt: string, retryAfterS: number, maxSecrets: number) {
    super(
      'conflict',
      `the webhook secret was rotated twice within 24 hours: a rotation now would need ${maxSecrets + 1} signatures on each delivery (at most ${maxSecrets}); try again at ${retryAt}, when the oldest replaced secret stops signing`,
      { retry_at: retryAt },
      { 'retry-after': String(retryAfterS) },
    );
  }
}

/** Retry-After of a check refused for want of a judge: an operator has to act first. */
export const JUDGE_UNAVAILABLE_RETRY_S = 60;

/** What to set when a process has no judge (in messages and the worker's start warning). */
export const JUDGE_SETTINGS_HINT =
  'set NETDIAG_JUDGE_URL (or NETDIAG_PUBLIC_URL, whose /judge is used) to a judge the proxies and this process can reach, or run an API instance (netdiag serve) on this database; NETDIAG_JUDGE_SECRET must be the same on every process, or unset on all of them';

/**
 * 503: a proxy check cannot be judged here, because this process has no judge it can reach. It
 * is the service's fault, not the proxy's: a check never reports a proxy `failed` for it.
 */
export class JudgeUnavailableError extends ServiceUnavailableError {
  constructor(reason: string) {
    super(`proxy checks are unavailable, the service is misconfigured: ${reason}; ${JUDGE_SETTINGS_HINT}`, JUDGE_UNAVAILABLE_RETRY_S);
  }
}

/** Retry-After of a path tool call refused for want of the program or its privilege: an operator has to act first. */
export const PATH_TOOL_UNAVAILABLE_RETRY_S = 60;
/** A path tool stopped at its deadline on a busy machine: try again in a few seconds. */
export const PATH_TOOL_BUSY_RETRY_S = 5;

/**
 * 503: a path tool (ping, traceroute, mtr) cannot run on this server: its program is missing or
 * may not send raw packets. The message names what is missing and how to provide it
 * (docs/path-tools.md); the rest of the service is unaffected.
 */
export class PathToolUnavailableError extends ServiceUnavailableError {
  constructor(tool: string, reason: string) {
    super(`${tool} is unavailable on this server: ${reason}`, PATH_TOOL_UNAVAILABLE_RETRY_S);
  }
}

/*
 * Internal errors: thrown and caught inside the server, they never reach a client as themselves
 * (a probe reports them as a result, a run gives its job back, the error handler maps them).
 */

/** A connect's failure, as the system reported it. */
export type DialErrorCode =
  | 'ECONNREFUSED'
  | 'ETIMEDOUT'
  | 'EHOSTUNREACH'
  | 'ENETUNREACH'
  | 'ECONNRESET'
  | 'EADDRNOTAVAIL'
  | 'EACCES'
  | 'EPERM'
  | 'ABORT_ERR'
  /** Anything else the system reported; `cause` has it. */
  | 'EDIAL';

/** The short text of each dial error code. */
const DIAL_ERROR_DESCRIPTIONS: Record<DialErrorCode, string> = {
  ECONNREFUSED: 'connection refused',
  ETIMEDOUT: 'connection timed out',
  EHOSTUNREACH: 'host unreachable',
  ENETUNREACH: 'network unreachable',
  ECONNRESET: 'connection reset',
  EADDRNOTAVAIL: 'address not available',
  EACCES: 'connection not permitted',
  EPERM: 'connection not permitted',
  ABORT_ERR: 'aborted',
  EDIAL: 'connection failed',
};

/** The short text of a dial error code, as results show it ("connection refused"). */
export function describeDialError(code: DialErrorCode): string {
  return DIAL_ERROR_DESCRIPTIONS[code];
}

/** A connect that failed (refused, timed out, unreachable): probes report it as a result. */
export class DialError extends Error {
  readonly code: DialErrorCode;
  /** Time spent connecting (not queued), in ms with two decimals. */
  readonly elapsedMs: number;
  readonly address: string;
  readonly port: number;
  /** Time waiting for a socket slot before the connect, ms with two decimals. */
  readonly queuedMs: number;

  constructor(code: DialErrorCode, address: string, port: number, elapsedMs: number, cause?: unknown, queuedMs = 0) {
    const where = address.includes(':') ? `[${address}]:${port}` : `${address}:${port}`;
    super(`${DIAL_ERROR_DESCRIPTIONS[code]} (${where})`, cause === undefined ? undefined : { cause });
    this.name = 'DialError';
    this.code = code;
    this.address = address;
    this.port = port;
    this.elapsedMs = elapsedMs;
    this.queuedMs = queuedMs;
  }

  /** Short text for a result's `error` field. */
  get reason(): string {
    return DIAL_ERROR_DESCRIPTIONS[this.code];
  }
}

/** Why a name did not resolve, in c-ares' words. */
export type ResolveErrorCode =
  /** The name does not exist (NXDOMAIN). */
  | 'ENOTFOUND'
  /** The name exists but has no address of the asked family. */
  | 'ENODATA'
  | 'ETIMEOUT'
  | 'ESERVFAIL'
  | 'EREFUSED'
  /** Anything else c-ares reports (bad response, connection refused by the server, ...). */
  | 'EDNS';

/** A name that did not resolve. Probes report it as a result (200), not as a request error. */
export class ResolveError extends Error {
  readonly code: ResolveErrorCode;
  readonly hostname: string;

  constructor(code: ResolveErrorCode, hostname: string, message: string, options?: { cause?: unknown }) {
    super(message, options);
    this.name = 'ResolveError';
    this.code = code;
    this.hostname = hostname;
  }
}

/** Why a step through the proxy failed, ranked by how much it tells (see `rank`). */
export type ProxyFailKind =
  /** The proxy refused our credentials, or wants some we did not give. */
  | 'auth'
  /** The proxy spoke its protocol but could not or would not relay to the destination. */
  | 'relay'
  /** The proxy accepted the tunnel but the destination's answer did not come in time. */
  | 'relay_timeout'
  /** What came back is not the protocol tried (or the peer hung up on it). */
  | 'protocol'
  /** Connected, then silence. */
  | 'timeout'
  /** The TCP connect itself failed or timed out. */
  | 'connect'
  | 'connect_timeout';

/** A step through a proxy that failed, with how much it tells (`kind`). */
export class ProxyStepError extends Error {
  constructor(
    readonly kind: ProxyFailKind,
    message: string,
  ) {
    super(message);
    this.name = 'ProxyStepError';
  }
}

/** Why an exchange failed: the peer spoke no HTTP, hung up, or we gave up. */
export class ExchangeError extends Error {
  constructor(
    readonly kind: 'protocol' | 'closed' | 'aborted',
    message: string,
  ) {
    super(message);
    this.name = 'ExchangeError';
  }
}

/**
 * The client closed its connection before its answer was sent. Work done for it after that is
 * waste: a 1000-port scan at a 30 s timeout would hold its share of the socket budget for a
 * minute for nobody. Nobody reads the reply either; it is logged and recorded with status 499
 * (nginx's "client closed request"), never sent.
 */
export class ClientGoneError extends Error {
  constructor() {
    super('the client closed the connection before the answer was ready; its work was cancelled');
    this.name = 'ClientGoneError';
  }
}

/** A DNS answer whose names need more decompression steps than the budget (DNS_MAX_NAME_STEPS). */
export class NameBudgetError extends Error {
  constructor(maxSteps: number) {
    super(`its names need more than ${maxSteps} steps to decompress`);
    this.name = 'NameBudgetError';
  }
}

/** Why an exchange with one server gave no answer: `unreachable` becomes UNREACHABLE, the others TIMEOUT. */
export class DnsTransportError extends Error {
  constructor(
    readonly reason: 'timeout' | 'unreachable' | 'network' | 'malformed',
    message: string,
  ) {
    super(message);
    this.name = 'DnsTransportError';
  }
}

/**
 * A path tool program that failed (src/infra/path). `no_route`: this machine has no route to the
 * address (the program said "Network is unreachable"), which the path tools report as their
 * result's `error`; `failed`: anything else (an exit it should not make, output it should not
 * print, its deadline or output bound passed), which is our fault (a 500).
 */
/**
 * A path tool's program that did not do its work. `busy`: stopped at its deadline, far beyond
 * what its arguments allow (a machine too busy to run it in time): a 503 with Retry-After
 * (PATH_TOOL_BUSY_RETRY_S, src/error-answers.ts). `failed`: anything else odd, a 500.
 */
export class PathToolError extends Error {
  constructor(
    readonly tool: string,
    readonly kind: 'no_route' | 'failed' | 'busy',
    readonly reason: string,
  ) {
    super(`${tool}: ${reason}`);
    this.name = 'PathToolError';
  }
}

/** Why a run was aborted: the queue is closing (its claim is given back). */
export class QueueClosingError extends Error {
  constructor() {
    super('the server is shutting down; the job will run again');
    this.name = 'QueueClosingError';
  }
}

/**
 * Why a run was aborted: it gave its turn back to another account's waiting work (its claim is
 * given back at once, its completed items kept); it goes on later from where it was.
 */
export class TurnYieldedError extends Error {
  constructor() {
    super("the run gave its turn to another account's work; it goes on later");
    this.name = 'TurnYieldedError';
  }
}

/** Why a run was aborted: its lease was lost (cancelled or taken over elsewhere). */
export class LeaseLostError extends Error {
  constructor() {
    super('the job is no longer held by this process');
    this.name = 'LeaseLostError';
  }
}

/** A failure of Redis itself (unreachable, timed out), as opposed to one of the usage store while seeding. */
export class RedisUnavailableError extends Error {
  constructor(override readonly cause: unknown) {
    super(`redis unavailable: ${cause instanceof Error ? cause.message : String(cause)}`);
  }
}

/**
 * What the store throws when the database cannot be reached: at once while the breaker is open,
 * or wrapping the connection-level failure (`cause`). Only this becomes a 503: an ECONNREFUSED of
 * anything else (a probe, a resolver) is not the database's.
 */
export class DatabaseUnavailableError extends Error {
  readonly code = 'NETDIAG_DATABASE_UNAVAILABLE';
  constructor(cause?: unknown) {
    const why = cause instanceof Error && cause.message ? `: ${cause.message}` : '';
    super(`the database cannot be reached${why}`, cause === undefined ? undefined : { cause });
    this.name = 'DatabaseUnavailableError';
  }
}

/**
 * A connect or statement to the database that timed out while the database is taken as slow
 * rather than gone (see PG_UNRESPONSIVE_MS): the call still answers 503, but /readyz stays 200.
 */
export class DatabaseSlowError extends DatabaseUnavailableError {
  constructor(cause: unknown) {
    super(cause);
    this.name = 'DatabaseSlowError';
  }
}

/** A webhook send given up: its deadline passed or its delivery was aborted. */
export class WebhookAbortedError extends Error {}

/** An RDAP request given up: its deadline passed or the lookup was aborted. */
export class RdapAbortedError extends Error {
  constructor(url: string) {
    super(`${url}: request aborted`);
    this.name = 'RdapAbortedError';
  }
}

/**
 * An item its text function could not write (the answer's serializer refused it): the job fails,
 * as the synchronous call would answer a 500, instead of its write failing as a database's would.
 */
export class ItemTextError extends Error {
  constructor(cause: unknown) {
    super('a completed item could not be written as JSON', { cause });
    this.name = 'ItemTextError';
  }
}

/** The reason a run is aborted when its job is cancelled. */
export class JobCancelledError extends Error {
  constructor() {
    super('the job was cancelled');
    this.name = 'JobCancelledError';
  }
}

/* Start-up and command-line errors: the process stops, or the CLI exits 2, with their message. */

/** A bad value stops the server with one line naming the variable. */
export class ConfigError extends Error {
  constructor(variable: string, rule: string, value: string) {
    super(`${variable}=${JSON.stringify(value)}: ${rule}`);
    this.name = 'ConfigError';
  }
}

/** `netdiag worker` with NETDIAG_WORKERS=0 would run nothing. */
export class WorkerConfigError extends Error {}

/** Bad arguments: exit code 2. `usage` (the general usage unless given) is printed after the message. */
export class UsageError extends Error {
  constructor(
    message: string,
    readonly usage?: string,
  ) {
    super(message);
  }
}
