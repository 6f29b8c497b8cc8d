/**
 * Every error the API can answer with, built from one table of codes.
 * Domain code throws these; the HTTP layer turns them into the error envelope.
 * docs/errors.md lists the same table and a test keeps the two equal.
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
  constructor(target: string, address: string, range: string, rangeType: string) {
    super(
      'target_forbidden',
      `target ${target} resolves to ${address}, which is in the blocked ${rangeType} range ${range}`,
      { target, address, range, type: rangeType },
    );
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
