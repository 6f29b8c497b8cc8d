import { Type, type TSchema } from 'typebox';
import { ERROR_CODES, type ErrorCode } from '../../errors.js';

/**
 * The error bodies of docs/errors.md's table, one per status: `error` is the enum of the codes that status
 * carries (src/errors.ts's table, which docs/errors.md mirrors). A route's schema names the
 * statuses it answers (src/http/error-responses.ts adds those every route of its kind answers),
 * so Fastify writes each error with its status's schema and the document lists each status apart.
 */

/** The statuses an /api route can answer with an error body after routing (the parser's 400/408/431 come before any route). */
export const ROUTE_ERROR_STATUSES = [400, 401, 403, 404, 409, 413, 415, 429, 500, 503] as const;
export type RouteErrorStatus = (typeof ROUTE_ERROR_STATUSES)[number];

/** The codes one status carries, in the table's order. */
export function codesOf(status: number): ErrorCode[] {
  return (Object.keys(ERROR_CODES) as ErrorCode[]).filter((code) => ERROR_CODES[code] === status);
}

/** Rules a person reads in each status's `details` (the fields are machine-readable too). */
const DETAILS: Partial<Record<RouteErrorStatus, TSchema>> = {
  400: Type.Object(
    { field: Type.Optional(Type.String({ description: 'validation_error: the offending field, e.g. `ports` or `proxies[3]`' })) },
    { additionalProperties: true },
  ),
  429: Type.Object(
    {
      limit: Type.Integer({
        description: "the plan's per-minute maximum; `job_reads`: the job-read limit that was exceeded, not the plan's (10 reads a second of one job, or the account's bound, as `per` says)",
      }),
      remaining: Type.Integer({ description: 'always 0' }),
      reset_at: Type.String({ description: 'UTC end of the exceeded window, `YYYY-MM-DD HH:MM:SS` (`job_reads`: the end of the current second)' }),
      window: Type.Enum(['minute', 'hour', 'day', 'concurrent', 'job_reads'], {
        type: 'string',
        description: 'the exceeded window; `concurrent`: probing requests in flight; `job_reads`: reads of a job (or of all its jobs by one account) in one second',
      }),
      per: Type.Optional(Type.Enum(['job', 'account'], { type: 'string', description: '`job_reads` only: the limit of one job, or of all the account\'s jobs together' })),
    },
    { additionalProperties: true },
  ),
  503: Type.Object({ retry_after_s: Type.Optional(Type.Integer({ description: 'the same as Retry-After' })) }, { additionalProperties: true }),
};

const AnyDetails = Type.Object({}, { additionalProperties: true });

/** The error envelope with `error` restricted to `codes`. */
function errorBody(codes: readonly string[], options: { $id?: string; title?: string; description?: string }, details: TSchema, detailsRequired: boolean) {
  return Type.Object(
    {
      success: Type.Literal(false),
      error: Type.Enum([...codes], { type: 'string', description: 'machine-readable code' }),
      message: Type.String({ description: 'what went wrong, naming the field and the rule' }),
      details: detailsRequired ? details : Type.Optional(details),
    },
    options,
  );
}

/** Any error body, whatever its status: a failed job's `error` is one. */
export const ErrorBody = errorBody(Object.keys(ERROR_CODES), { $id: 'ErrorBody', title: 'Error' }, AnyDetails, false);

/** The component id of a status's error body. */
export function errorSchemaId(status: RouteErrorStatus): string {
  return `Error${status}`;
}

/** The error body of each status, with its $id, for app.addSchema. */
export const STATUS_ERROR_BODIES: TSchema[] = ROUTE_ERROR_STATUSES.map((status) =>
  errorBody(codesOf(status), { $id: errorSchemaId(status), title: `Error${status}` }, DETAILS[status] ?? AnyDetails, status === 429),
);

/** What a route's schema says for an error status: a reference to that status's body. */
export function errorResponse(status: RouteErrorStatus): TSchema {
  return Type.Ref(errorSchemaId(status));
}
