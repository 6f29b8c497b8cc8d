import type { ExampleObject, OperationExamples } from '../operations/shared/examples.js';
import { ok, one } from '../operations/shared/examples.js';
import { GOOGLE_DNS } from '../operations/ip-lookup/examples.js';
import { PORT_443, portExample as port } from '../operations/port-scan/examples.js';
import type { RouteErrorStatus } from './schemas/errors.js';

/**
 * The OpenAPI document's examples of what is no operation (src/operations/shared/examples.ts
 * says what they are for; each operation declares its own in its folder): the routes of the
 * account, usage, jobs and webhooks, every error status, a job's streams and the webhook events.
 */

/** The routes that are no operation, keyed `METHOD /path` as in the OpenAPI document. */
export const ROUTE_EXAMPLES: Record<string, OperationExamples> = {
  'GET /api/user': {
    ok: ok(
      {
        id: 1,
        name: 'Ada Lovelace',
        email: 'ada@example.com',
        plan: 'pro',
        api_calls_used: 42,
        api_calls_limit: 10000,
        rate_limit: { requests_per_minute: 60, requests_per_hour: 1000, requests_per_day: 10000 },
        created_at: '2026-11-01T09:30:00.000Z',
      },
      'account retrieved',
    ),
  },
  'GET /api/usage/stats': {
    ok: ok(
      {
        plan: 'pro',
        api_calls_used: 42,
        api_calls_limit: 10000,
        windows: {
          minute: { limit: 60, used: 3, remaining: 57, reset_at: '2026-11-23 04:53:00' },
          hour: { limit: 1000, used: 42, remaining: 958, reset_at: '2026-11-23 05:00:00' },
          day: { limit: 10000, used: 42, remaining: 9958, reset_at: '2026-11-24 00:00:00' },
        },
        today: { requests: 44, successful: 39, failed: 3, rate_limited: 2 },
        by_endpoint: { '/proxy/check': 20, '/ip/lookup': 15, '/dns/lookup': 7 },
      },
      'usage statistics',
    ),
  },
  'GET /api/usage/history': {
    ok: ok(
      [
        { date: '2026-11-22', requests: 0, successful: 0, failed: 0, rate_limited: 0 },
        { date: '2026-11-23', requests: 44, successful: 39, failed: 3, rate_limited: 2 },
      ],
      'usage of the last 2 days',
    ),
  },
  'GET /api/usage/export': {
    ok: {
      ...ok(
        [
          { date: '2026-11-23', endpoint: '/ip/lookup', requests: 15, successful: 15, failed: 0, rate_limited: 0, avg_response_time: 1.92 },
          { date: '2026-11-23', endpoint: '/proxy/check', requests: 22, successful: 18, failed: 2, rate_limited: 2, avg_response_time: 1734.5 },
        ],
        'usage export',
      ),
      'text/csv': one(
        'format=csv',
        'date,endpoint,requests,successful,failed,rate_limited,avg_response_time\n' +
          '2026-11-23,/ip/lookup,15,15,0,0,1.92\n' +
          '2026-11-23,/proxy/check,22,18,2,2,1734.5\n',
      ),
    },
  },
  'GET /api/webhooks/secret': {
    ok: ok(
      { secret: 'whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw/6s0I5iaa2o=', created_at: '2026-11-01T09:30:00.000Z', previous_valid_until: null, replaced_valid_until: [] },
      'webhook signing secret',
    ),
  },
  'POST /api/webhooks/secret/rotate': {
    body: one('no body is needed', {}),
    ok: ok(
      {
        secret: 'whsec_C2yXq5zD8nR3kJ0Wm7Tq1vLhP4sYbE6gFuN9aKoZiVc=',
        created_at: '2026-11-23T04:52:29.511Z',
        previous_valid_until: '2026-11-24T04:52:29.511Z',
        replaced_valid_until: ['2026-11-24T04:52:29.511Z'],
      },
      'webhook signing secret rotated; the previous one signs too until previous_valid_until',
    ),
  },
  'GET /api/ip/my-ip': {
    ok: ok({ ...GOOGLE_DNS, ip: '8.8.4.4' }, 'your address'),
  },
};

const JOB_ID = 'job_3fK9qLm2Xw8RtZ5bN1cVd7Hy';
/** A job as GET /api/jobs/{id} shows it: a range scan, finished. */
const JOB_DONE = {
  id: JOB_ID,
  endpoint: '/port/scan-range',
  status: 'succeeded',
  progress: { done: 2, total: 2 },
  created_at: '2026-11-23T04:52:28.102Z',
  started_at: '2026-11-23T04:52:28.131Z',
  finished_at: '2026-11-23T04:52:29.511Z',
  result: [port(80, 'http', 'open', 22.9), PORT_443],
  error: null,
  webhook_url: 'https://hooks.example.com/netdiag',
};
/** The same job as its 202 answers it: queued, nothing done yet. */
function jobQueued(endpoint: string): Record<string, unknown> {
  return { ...JOB_DONE, endpoint, status: 'queued', progress: { done: 0, total: 1 }, started_at: null, finished_at: null, result: null };
}

ROUTE_EXAMPLES['GET /api/jobs/{id}'] = { ok: ok(JOB_DONE, 'job succeeded: 2 of 2 done') };
ROUTE_EXAMPLES['GET /api/jobs'] = { ok: ok({ jobs: [JOB_DONE], next_cursor: null }, '1 jobs') };
ROUTE_EXAMPLES['DELETE /api/jobs/{id}'] = {
  ok: ok({ ...JOB_DONE, status: 'cancelled', progress: { done: 1, total: 2 }, result: [PORT_443] }, 'job cancelled'),
};

ROUTE_EXAMPLES['POST /api/jobs/{id}/deliveries'] = {
  body: one('no body is needed', {}),
  ok: ok(JOB_DONE, `the succeeded event of job ${JOB_ID} is queued for ${JOB_DONE.webhook_url}`),
};

function errorBody(error: string, message: string, details?: Record<string, unknown>): Record<string, unknown> {
  return details ? { success: false, error, message, details } : { success: false, error, message };
}

/** The 202 of a POST run as a job (Prefer: respond-async). */
export function jobAcceptedExample(endpoint: string): Record<string, ExampleObject> {
  return ok(jobQueued(endpoint), `job ${JOB_ID} queued: ${endpoint}`, 'Prefer: respond-async: the job, queued')['application/json']!;
}

/** An operation's own 400: the field its validation names. */
export function validationExample(invalid: { field: string; message: string }): ExampleObject {
  return { summary: 'validation_error', value: errorBody('validation_error', invalid.message, { field: invalid.field }) };
}

/** Every error code's example, by status (the shared error responses of the document). */
export const ERROR_EXAMPLES: Record<RouteErrorStatus, Record<string, ExampleObject>> = {
  400: {
    validation_error: validationExample({ field: 'ports', message: 'ports: at most 1000 entries' }),
    invalid_json: { summary: 'invalid_json', value: errorBody('invalid_json', 'request body is not valid JSON: Unexpected end of JSON input') },
  },
  401: {
    unauthorized: { summary: 'unauthorized', value: errorBody('unauthorized', 'a valid API token is required: send "Authorization: Bearer <token>"') },
  },
  403: {
    forbidden: { summary: 'forbidden (suspended account)', value: errorBody('forbidden', 'this account is suspended; contact the operator of this service') },
    target_forbidden: {
      summary: 'target_forbidden',
      value: errorBody('target_forbidden', 'target 10.0.0.1 resolves to 10.0.0.1, which is in the blocked private range 10.0.0.0/8', {
        target: '10.0.0.1',
        address: '10.0.0.1',
        range: '10.0.0.0/8',
        type: 'private',
      }),
    },
  },
  404: {
    not_found: { summary: 'not_found', value: errorBody('not_found', 'no such job: it never existed, belongs to another account, or is past its time to live') },
  },
  409: {
    conflict: { summary: 'conflict', value: errorBody('conflict', 'the job has already finished; only a queued or running job can be cancelled') },
  },
  413: {
    payload_too_large: { summary: 'payload_too_large', value: errorBody('payload_too_large', 'request body is larger than 1048576 bytes', { limit: 1048576 }) },
  },
  415: {
    unsupported_media_type: {
      summary: 'unsupported_media_type',
      value: errorBody('unsupported_media_type', 'request body must be sent as Content-Type: application/json, not text/plain'),
    },
  },
  429: {
    rate_limit_exceeded: {
      summary: 'rate_limit_exceeded',
      value: errorBody('rate_limit_exceeded', 'rate limit exceeded for the pro plan: at most 60 requests per minute; try again after 2026-11-23 04:53:00 UTC', {
        limit: 60,
        remaining: 0,
        reset_at: '2026-11-23 04:53:00',
        window: 'minute',
      }),
    },
  },
  500: {
    internal_error: { summary: 'internal_error', value: errorBody('internal_error', 'internal error; the request id in X-Request-Id identifies it in the server log') },
  },
  503: {
    service_unavailable: {
      summary: 'service_unavailable',
      value: errorBody('service_unavailable', 'the database cannot be reached just now; send the request again after Retry-After seconds', { retry_after_s: 5 }),
    },
  },
};

const STREAM_ITEMS = [
  { seq: 1, index: 0, item: port(80, 'http', 'open', 22.9) },
  { seq: 2, index: 1, item: PORT_443 },
];

/** GET /api/jobs/{id} streamed: the NDJSON text and the SSE text, each a whole body. */
export const JOB_STREAM_EXAMPLES: Record<string, Record<string, ExampleObject>> = {
  'application/x-ndjson': {
    stream: {
      summary: 'two items, then the job (one JSON text a line)',
      value: [...STREAM_ITEMS, JOB_DONE].map((line) => `${JSON.stringify(line)}\n`).join(''),
    },
  },
  'text/event-stream': {
    stream: {
      summary: 'two items, then the job',
      value:
        'retry: 1000\n\n' +
        STREAM_ITEMS.map((line) => `id: ${line.seq}\nevent: item\ndata: ${JSON.stringify(line)}\n\n`).join('') +
        `event: job\ndata: ${JSON.stringify(JOB_DONE)}\n\n`,
    },
  },
};

/** The body of each webhook event, by type. */
export const WEBHOOK_EVENT_EXAMPLES: Record<string, ExampleObject> = {
  'job.succeeded': { summary: 'a range scan succeeded', value: { type: 'job.succeeded', timestamp: JOB_DONE.finished_at, data: JOB_DONE } },
  'job.failed': {
    summary: 'a job failed with the error the synchronous call would have answered',
    value: {
      type: 'job.failed',
      timestamp: JOB_DONE.finished_at,
      data: {
        ...JOB_DONE,
        status: 'failed',
        result: null,
        error: ERROR_EXAMPLES[403].target_forbidden!.value,
      },
    },
  },
  'job.cancelled': {
    summary: 'a job cancelled with DELETE /api/jobs/{id}',
    value: { type: 'job.cancelled', timestamp: JOB_DONE.finished_at, data: { ...JOB_DONE, status: 'cancelled', progress: { done: 1, total: 2 }, result: [PORT_443] } },
  },
};
