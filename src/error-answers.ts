import type { JobError } from './domain/jobs/types.js';
import { AppError, DatabaseUnavailableError, DialError, InternalError, PATH_TOOL_BUSY_RETRY_S, PathToolError, ServiceUnavailableError } from './errors.js';

/**
 * What a client is told for an error the process itself throws, wherever it runs: a
 * synchronous call's answer (src/http/plugins/errors.ts adds what only Fastify throws: failed
 * validation, the body parser's errors) and a job's recorded `error`, in the API process or in
 * `netdiag worker`, which loads no HTTP code. Imports only src/errors.ts and a domain type.
 */

/** The Retry-After (seconds) of an answer refused because the database cannot be reached. */
export const DATABASE_RETRY_AFTER_S = 1;

/** What a client is told while the database cannot be reached. */
export const DATABASE_UNAVAILABLE_MESSAGE = 'the database cannot be reached just now; send the request again after Retry-After seconds';

/**
 * A connect that failed with EADDRNOTAVAIL (this machine had no local port or address free for it:
 * ephemeral ports used up, an address gone) says nothing of the target, so the scan and the ping
 * rethrow it rather than report a wrong state. It is a passing state of this server: a 503 with
 * Retry-After (a few seconds, for sockets to close), not a 500.
 */
export const LOCAL_ADDRESS_RETRY_AFTER_S = 5;
export const LOCAL_ADDRESS_UNAVAILABLE_MESSAGE = 'this server has no local port free for the connection just now; send the request again after Retry-After seconds';

/**
 * The API error an error of this process answers as: an AppError itself, the database's outage,
 * a machine out of local ports and a path tool stopped at its deadline as 503s; null for
 * anything else (a bug: a 500, unless the HTTP layer knows it as one of Fastify's).
 */
export function knownAppError(error: unknown): AppError | null {
  if (error instanceof AppError) return error;
  // Not logged here, per request: the error handler logs an outage once (src/http/plugins/errors.ts).
  if (error instanceof DatabaseUnavailableError) return new ServiceUnavailableError(DATABASE_UNAVAILABLE_MESSAGE, DATABASE_RETRY_AFTER_S);
  if (error instanceof DialError && error.code === 'EADDRNOTAVAIL') return new ServiceUnavailableError(LOCAL_ADDRESS_UNAVAILABLE_MESSAGE, LOCAL_ADDRESS_RETRY_AFTER_S);
  if (error instanceof PathToolError && error.kind === 'busy') {
    return new ServiceUnavailableError(`${error.message}: this server is too busy just now; send the request again after Retry-After seconds`, PATH_TOOL_BUSY_RETRY_S);
  }
  return null;
}

/** The error envelope of an API error: the body every refusal and failure is answered with. */
export function errorEnvelope(error: AppError): JobError {
  return {
    success: false,
    error: error.code,
    message: error.message,
    ...(error.details ? { details: error.details } : {}),
  };
}

/** What a job that failed records as its `error`: the envelope its synchronous call would have answered. */
export function jobErrorOf(error: unknown): JobError {
  return errorEnvelope(knownAppError(error) ?? new InternalError());
}
