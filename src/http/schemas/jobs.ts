import { Type } from 'typebox';
import { JOB_STATUSES } from '../../domain/jobs/types.js';
import { WEBHOOK_URL_MAX_CHARS } from '../../domain/webhooks/url.js';
import { Nullable } from '../../operations/shared/schema.js';
import { envelope } from './common.js';

/** The job id: `job_` and 24 base62 characters; anything else is a 404 without a query. */
export const JOB_ID_PATTERN = /^job_[0-9A-Za-z]{24}$/;
export const JOB_LIST_MAX = 100;
export const JOB_LIST_DEFAULT = 20;
/** A cursor is an opaque token of a few dozen characters; anything longer is a 400. */
export const JOB_CURSOR_MAX_CHARS = 200;

const Status = Type.Union(JOB_STATUSES.map((s) => Type.Literal(s)));

const WebhookAttempt = Type.Object({
  attempt: Type.Integer(),
  at: Type.String(),
  status: Nullable(Type.Integer()),
  duration_ms: Type.Number(),
  error: Nullable(Type.String()),
});

/**
 * A job as the API answers it (docs/jobs.md): a shared schema (app.addSchema), so
 * routes name it with JobRef and the document has it once, as the component `Job`.
 */
export const JobView = Type.Object(
  {
    id: Type.String({ description: 'job_ and 24 base62 characters' }),
    endpoint: Type.String({ description: 'the POST endpoint it runs, without /api' }),
    status: Status,
    progress: Type.Object({ done: Type.Integer(), total: Type.Integer() }),
    created_at: Type.String(),
    started_at: Nullable(Type.String()),
    finished_at: Nullable(Type.String()),
    result: Type.Unknown({ description: "what the synchronous call puts in data; while running, a bulk or range call's items completed so far, in input order" }),
    error: Nullable(Type.Ref('ErrorBody', { description: 'the error body the synchronous call would have answered with' })),
    webhook_url: Nullable(Type.String()),
    webhook_deliveries: Type.Optional(Type.Array(WebhookAttempt)),
  },
  { $id: 'Job', title: 'Job' },
);
export const JobRef = Type.Ref('Job');

// No bounds here: a malformed id is a 404 (not a 400), judged by JOB_ID_PATTERN without a query.
export const JobParams = Type.Object({ id: Type.String() });

export const JobListQuery = Type.Object({
  status: Type.Optional(Type.Union(JOB_STATUSES.map((s) => Type.Literal(s)))),
  limit: Type.Optional(Type.Integer({ minimum: 1, maximum: JOB_LIST_MAX, default: JOB_LIST_DEFAULT })),
  cursor: Type.Optional(Type.String({ maxLength: JOB_CURSOR_MAX_CHARS })),
});

export const JobList = Type.Object({
  jobs: Type.Array(JobRef),
  next_cursor: Nullable(Type.String({ description: 'pass as cursor for the next page; null on the last' })),
});

/** What a POST answers with Prefer: respond-async: the job, queued, and where to read it. */
export const JobAccepted = {
  ...envelope(JobRef),
  description: 'Sent with `Prefer: respond-async`: the job, queued; read it at `Location` (GET /api/jobs/{id}), stream it, or wait for its webhook.',
  headers: {
    Location: Type.String({ description: 'where the job is read: `/api/jobs/{id}`' }),
    'Preference-Applied': Type.Literal('respond-async', { description: 'RFC 7240: the preference was honoured' }),
  },
};

/** `webhook_url` of every POST body (the operation's own schema does not carry it: a job keeps it apart). */
export const WebhookUrlField = Type.Optional(
  Nullable(
    Type.String({
      maxLength: WEBHOOK_URL_MAX_CHARS,
      description:
        'Only with `Prefer: respond-async`: an http:// or https:// URL the finished job is POSTed to (see the `webhooks` of this document), signed as Standard Webhooks says. Passes the same target policy as every probe: a forbidden one is a 403 before the job is made. Ignored by a synchronous call.',
    }),
  ),
);

/** The request headers GET /api/jobs/{id} reads (Accept picks the media type of its 200). */
export const JobReadHeaders = Type.Object({
  'If-None-Match': Type.Optional(Type.String({ description: 'an ETag of an earlier answer: 304 while the job is unchanged (a stream: once the job has finished)' })),
  'Last-Event-ID': Type.Optional(
    Type.String({ description: 'with `Accept: text/event-stream`: the `id` (item sequence number) of the last event received; the stream resumes after it' }),
  ),
});

const ETAG_DESCRIPTION = 'the job as it stands; send it back in If-None-Match';
const ETag = Type.String({ description: ETAG_DESCRIPTION });

/**
 * One line of a job's NDJSON stream, one `data` of its SSE events: a completed item, the finished
 * job last, or an error that ended the stream. Written out where each stream's media type names
 * it as its item schema, not a component: a component referred to only from an extension is one
 * a linter calls unused.
 */
export const JobStreamLine = Type.Union(
  [
    Type.Object({ seq: Type.Integer({ description: 'sequence number, from 1' }), index: Type.Integer({ description: "the item's place in `result`" }), item: Type.Unknown() }, { title: 'JobItemLine' }),
    Type.Ref('Job', { description: 'the last line: the finished job' }),
    Type.Object({ error: Type.Ref('ErrorBody') }, { title: 'JobStreamErrorLine', description: 'the stream could not go on (the database went away): the error a request would get' }),
  ],
  { title: 'JobStreamLine' },
);

/** The events of a job's SSE stream, as a client's EventSource hands them over. */
export const SSE_EVENTS = ['item', 'job', 'error'] as const;
const JobStreamEvent = Type.Object(
  {
    id: Type.Optional(Type.String({ description: '`item` events: the seq, for Last-Event-ID' })),
    event: Type.Enum([...SSE_EVENTS], { type: 'string', description: '`item` per completed item, `job` last, `error` when the stream cannot go on' }),
    data: Type.String({ description: 'one JobStreamLine as JSON text', contentMediaType: 'application/json', contentSchema: JobStreamLine }),
  },
  { title: 'JobStreamEvent' },
);

/**
 * The schema of each item of a sequential media type, in a media type object: OpenAPI 3.2's
 * `itemSchema`, spelled as an extension in this 3.1 document. The body itself is text (a schema
 * of type string), which is what a validator that reads the whole body sees.
 */
export const ITEM_SCHEMA = 'x-item-schema';

/**
 * GET /api/jobs/{id}: the job as JSON, or its items streamed as NDJSON or Server-Sent Events. An
 * ETag on every answer, streams too: the job as it stood when the answer began.
 */
export const JobRead = {
  description:
    'The job (`Accept: application/json` or none); with `Accept: application/x-ndjson` one JSON line per completed item then the finished job; with `Accept: text/event-stream` the same as Server-Sent Events (`event: item`, `id` = seq; `event: job` last; `event: error` when the stream cannot go on).',
  headers: {
    ETag: Type.String({
      description: `${ETAG_DESCRIPTION}. Each representation has its own (a stream's ends in \`-ndjson\` or \`-sse\`); a running job's stream has a weak one (\`W/\`), the job as it stood when the stream began, never answered with a 304`,
    }),
  },
  content: {
    'application/json': { schema: envelope(JobRef) },
    'application/x-ndjson': {
      schema: Type.String({ description: 'NDJSON: one JSON text per line, each a JobStreamLine (`x-item-schema`): `{seq, index, item}` per completed item, the finished job last' }),
      [ITEM_SCHEMA]: JobStreamLine,
    },
    'text/event-stream': {
      schema: Type.String({ description: 'Server-Sent Events: `retry: 1000` first, then per event `id: <seq>` (items), `event: item|job|error`, `data: <one JobStreamLine>`' }),
      [ITEM_SCHEMA]: JobStreamEvent,
    },
  },
};

/** GET /api/jobs/{id} with If-None-Match naming the job as it stands. */
export const JobNotModified = { type: 'null', description: 'Not modified: the job is as the ETag in If-None-Match says.', headers: { ETag } } as const;
