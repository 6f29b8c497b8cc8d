/** The error body of every answer that is not a success (docs/errors.md). */
export interface ErrorBody {
  success: false;
  /** The machine-readable code: `validation_error`, `rate_limit_exceeded`, `target_forbidden`, … */
  error: string;
  message: string;
  details?: Record<string, unknown>;
}

/**
 * The server answered with an error: `status` its HTTP status, `code` the body's `error`,
 * `message` the body's message (a person can act on it), `headers` the answer's (Retry-After,
 * X-RateLimit-*). Codes the client makes itself, when the answer could not be read:
 * `invalid_response` (not the API's JSON) and `response_too_large` (over `maxBytes`). An error
 * that ends a job stream after its 200 has status 0.
 */
export class NetdiagError extends Error {
  override readonly name = 'NetdiagError';
  readonly status: number;
  readonly code: string;
  readonly details?: Record<string, unknown>;
  readonly headers: Headers;

  constructor(status: number, code: string, message: string, opts: { details?: Record<string, unknown>; headers?: Headers } = {}) {
    super(message);
    this.status = status;
    this.code = code;
    if (opts.details !== undefined) this.details = opts.details;
    this.headers = opts.headers ?? new Headers();
  }
}

/** The server could not be reached, or the connection broke before its answer was read. */
export class NetdiagConnectionError extends Error {
  override readonly name = 'NetdiagConnectionError';
}

/** A webhook delivery that does not verify: a missing header, a bad signature, a timestamp too old or new. */
export class WebhookVerificationError extends Error {
  override readonly name = 'WebhookVerificationError';
}

function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

/** The error body of an answer, when it is one. */
export function errorBodyOf(value: unknown): ErrorBody | undefined {
  if (!isRecord(value) || typeof value.error !== 'string' || typeof value.message !== 'string') return undefined;
  return { success: false, error: value.error, message: value.message, ...(isRecord(value.details) ? { details: value.details } : {}) };
}

/** The NetdiagError of an error answer: its body's code and message, or what can be said without them. */
export function errorOf(status: number, body: unknown, headers: Headers): NetdiagError {
  const parsed = errorBodyOf(body);
  if (parsed) return new NetdiagError(status, parsed.error, parsed.message, { headers, ...(parsed.details ? { details: parsed.details } : {}) });
  return new NetdiagError(status, 'invalid_response', `the server answered HTTP ${status} without the API's error body`, { headers });
}
