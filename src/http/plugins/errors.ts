import type { FastifyBaseLogger, FastifyError, FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { AppError, ClientGoneError, DialError, InternalError, InvalidJsonError, MethodNotAllowedError, NotFoundError, PayloadTooLargeError, ServiceUnavailableError, UnsupportedMediaTypeError, ValidationError } from '../../errors.js';
import { errorEnvelope, knownAppError } from '../../error-answers.js';
import { BODY_LIMIT_BYTES } from '../limits.js';
import type { JobError } from '../../domain/jobs/types.js';
import { validationErrorFromAjv } from '../validation.js';
import { pathOf, type RouteIndex } from '../route-index.js';
import { CLIENT_GONE_STATUS } from '../client-gone.js';

/** While the database cannot be reached, its 503s are logged at most this often: a line per outage, not per request. */
export const DATABASE_UNAVAILABLE_LOG_INTERVAL_MS = 60_000;

/**
 * What anything thrown answers as, logged as the operator needs it: null for a client that is
 * gone (nothing is sent), else the AppError to send. A bug is logged as 'unhandled error', a
 * machine out of local ports as a warning, and the database's outage once a minute at most.
 */
export type AnswerError = (thrown: unknown, log: FastifyBaseLogger) => AppError | null;

/** An AnswerError with its own memory of when the outage was last logged: one per app. */
export function errorAnswerer(): AnswerError {
  let unavailableLoggedAt = -Infinity;
  return (thrown, log) => {
    if (thrown instanceof ClientGoneError) {
      log.info({ reason: thrown.message }, 'client gone');
      return null;
    }
    const appError = thrown instanceof Error ? toAppError(thrown as FastifyError) : new InternalError();
    if (appError instanceof InternalError) {
      log.error({ err: thrown }, 'unhandled error');
    } else if (thrown instanceof DialError) {
      // The operator should see a machine out of ports, as the 500 it was showed it.
      log.warn({ err: thrown }, 'a connect found no local address free: answered 503');
    } else if (appError instanceof ServiceUnavailableError && !(thrown instanceof AppError)) {
      const now = Date.now();
      if (now - unavailableLoggedAt >= DATABASE_UNAVAILABLE_LOG_INTERVAL_MS) {
        unavailableLoggedAt = now;
        log.warn({ err: thrown }, 'the database cannot be reached: requests that need it are answered 503 (logged at most once a minute)');
      }
    }
    return appError;
  };
}

/**
 * Turns anything thrown into the error envelope (`answer`: the app's one AnswerError, which calls
 * made inside a request use too); knows which paths exist for 404 vs 405.
 */
export function registerErrorHandling(app: FastifyInstance, routes: RouteIndex, answer: AnswerError): void {
  app.setNotFoundHandler((request: FastifyRequest, reply: FastifyReply) => {
    const path = pathOf(request.url);
    const allowed = routes.methodsOf(path);
    const error =
      allowed && allowed.length > 0
        ? new MethodNotAllowedError(request.method, path, allowed)
        : NotFoundError.endpoint(request.method, path);
    return sendError(reply, error);
  });

  app.setErrorHandler((error: FastifyError, request: FastifyRequest, reply: FastifyReply) => {
    const appError = answer(error, request.log);
    return appError === null ? reply.code(CLIENT_GONE_STATUS).send() : sendError(reply, appError);
  });
}

/** RFC 6750's challenge on every 401; `error="invalid_token"` when the request carried credentials. */
const BEARER_CHALLENGE = 'Bearer realm="netdiag"';
const INVALID_TOKEN_CHALLENGE = `${BEARER_CHALLENGE}, error="invalid_token"`;

export function sendError(reply: FastifyReply, error: AppError): FastifyReply {
  if (error.headers) reply.headers(error.headers);
  if (error.status === 401) reply.header('www-authenticate', reply.request.headers.authorization ? INVALID_TOKEN_CHALLENGE : BEARER_CHALLENGE);
  return reply.code(error.status).send(errorEnvelope(error));
}

/**
 * The error envelope and status a synchronous call answers for anything thrown: a job that fails
 * records this very body as its `error`.
 */
export function errorResponseOf(err: unknown): { status: number; body: JobError; headers: Record<string, string>; unexpected: boolean } {
  const appError = err instanceof Error ? toAppError(err as FastifyError) : new InternalError();
  // `unexpected`: a bug, not an answer; the error handler logs these as 'unhandled error'.
  return { status: appError.status, body: errorEnvelope(appError), headers: appError.headers ?? {}, unexpected: appError instanceof InternalError };
}

/** What anything thrown answers as: an AppError with its status, message and headers (pages use it too). */
export function toAppError(error: FastifyError): AppError {
  // What the process throws (src/error-answers.ts, which jobs use too), then what only Fastify does.
  const known = knownAppError(error);
  if (known) return known;
  if (error.validation) return validationErrorFromAjv(error.validation, error.validationContext);
  switch (error.code) {
    case 'FST_ERR_CTP_INVALID_MEDIA_TYPE':
      return new UnsupportedMediaTypeError(undefined);
    case 'FST_ERR_CTP_BODY_TOO_LARGE':
      return new PayloadTooLargeError(BODY_LIMIT_BYTES);
    case 'FST_ERR_CTP_EMPTY_JSON_BODY':
      return new InvalidJsonError('the body is empty; send a JSON object or no Content-Type');
    case 'FST_ERR_CTP_INVALID_JSON_BODY':
      return new InvalidJsonError(error.message);
    case 'FST_ERR_CTP_INVALID_CONTENT_LENGTH':
      return new InvalidJsonError('Content-Length does not match the body');
  }
  if (error instanceof SyntaxError || /JSON|prototype/i.test(error.message)) {
    if (error.statusCode === 400) return new InvalidJsonError(error.message);
  }
  if (error.statusCode !== undefined && error.statusCode >= 400 && error.statusCode < 500) {
    return new ValidationError('request', error.message);
  }
  return new InternalError();
}
