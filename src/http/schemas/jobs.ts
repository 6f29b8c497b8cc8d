import { Type } from 'typebox';
import { JOB_STATUSES } from '../../domain/jobs/types.js';
import { Nullable } from './common.js';

/** The job id: `job_` and 24 base62 characters; anything else is a 404 without a query. */
export const JOB_ID_PATTERN = /^job_[0-9A-Za-z]{24}$/;
export const JOB_LIST_MAX = 100;
export const JOB_LIST_DEFAULT = 20;
/** A cursor is an opaque token of a few dozen characters; anything longer is a 400. */
export const JOB_CURSOR_MAX_CHARS = 200;

const Status = Type.Union(JOB_STATUSES.map((s) => Type.Literal(s)));

const JobErrorBody = Type.Object({
  success: Type.Literal(false),
  error: Type.String(),
  message: Type.String(),
  details: Type.Optional(Type.Object({}, { additionalProperties: true })),
});

const WebhookAttempt = Type.Object({
  attempt: Type.Integer(),
  at: Type.String(),
  status: Nullable(Type.Integer()),
  duration_ms: Type.Number(),
  error: Nullable(Type.String()),
});

/** A job as the API answers it (API.md, "Jobs and webhooks"). */
export const JobView = Type.Object({
  id: Type.String({ description: 'job_ and 24 base62 characters' }),
  endpoint: Type.String({ description: 'the POST endpoint it runs, without /api' }),
  status: Status,
  progress: Type.Object({ done: Type.Integer(), total: Type.Integer() }),
  created_at: Type.String(),
  started_at: Nullable(Type.String()),
  finished_at: Nullable(Type.String()),
  result: Type.Unknown({ description: "what the synchronous call puts in data; while running, a bulk or range call's items completed so far, in input order" }),
  error: Nullable(JobErrorBody),
  webhook_url: Nullable(Type.String()),
  webhook_deliveries: Type.Optional(Type.Array(WebhookAttempt)),
});

// No bounds here: a malformed id is a 404 (not a 400), judged by JOB_ID_PATTERN without a query.
export const JobParams = Type.Object({ id: Type.String() });

export const JobListQuery = Type.Object({
  status: Type.Optional(Type.Union(JOB_STATUSES.map((s) => Type.Literal(s)))),
  limit: Type.Optional(Type.Integer({ minimum: 1, maximum: JOB_LIST_MAX, default: JOB_LIST_DEFAULT })),
  cursor: Type.Optional(Type.String({ maxLength: JOB_CURSOR_MAX_CHARS })),
});

export const JobList = Type.Object({
  jobs: Type.Array(JobView),
  next_cursor: Nullable(Type.String({ description: 'pass as cursor for the next page; null on the last' })),
});
