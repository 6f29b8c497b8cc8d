import type { FastifyInstance } from 'fastify';
import { LRUCache } from 'lru-cache';
import type { Static } from 'typebox';
import { FINISHED_STATUSES } from '../../domain/jobs/types.js';
import { utcTimestamp } from '../../domain/usage/service.js';
import { ConflictError, JobNotFoundError, RateLimitError } from '../../errors.js';
import { accountOf } from '../plugins/auth.js';
import { ok } from '../reply.js';
import { answerDone, ifNoneMatch, jobEtag, joined, jsonPieces, sendPieces, streamsJson } from '../job-reads.js';
import { NoBody, responses } from '../schemas/common.js';
import { errorResponse } from '../schemas/errors.js';
import { JOB_LIST_DEFAULT, JobList, JobListQuery, JobNotModified, JobParams, JobRead, JobReadHeaders, JobRef } from '../schemas/jobs.js';
import type { RouteDeps } from './deps.js';
import { JOB_STREAMS_PER_ACCOUNT, resumeAfter, streamKind, type JobStreams } from '../job-streams.js';

/** Reads of one job an account may make per second (docs/jobs.md): polling faster than this gains nothing. */
export const JOB_READS_PER_SECOND = 10;
/** Counters of reads kept at once; past it the least recently read is forgotten (a second's worth is lost at most). */
const READ_COUNTERS_MAX = 10_000;

/**
 * Reads of all its jobs an account may make per second: the per-job limit alone let one account
 * read ever new ids (each a database query, none counted by the plan) as fast as it could send.
 */
export const JOB_READS_PER_ACCOUNT_PER_SECOND = JOB_READS_PER_SECOND * JOB_STREAMS_PER_ACCOUNT;

/**
 * At most JOB_READS_PER_SECOND reads per account and job, and JOB_READS_PER_ACCOUNT_PER_SECOND
 * per account, in each calendar second: 'job' or 'account' names the limit a read is over.
 */
export class JobReadCounter {
  readonly #counts = new LRUCache<string, { second: number; n: number }>({ max: READ_COUNTERS_MAX });

  take(accountId: number, id: string, now: number): 'job' | 'account' | null {
    const second = Math.floor(now / 1000);
    if (!this.#take(String(accountId), second, JOB_READS_PER_ACCOUNT_PER_SECOND)) return 'account';
    return this.#take(`${accountId}:${id}`, second, JOB_READS_PER_SECOND) ? null : 'job';
  }

  #take(key: string, second: number, max: number): boolean {
    const c = this.#counts.get(key);
    if (c && c.second === second) return ++c.n <= max;
    this.#counts.set(key, { second, n: 1 });
    return true;
  }
}

/**
 * A job-read 429's details: `limit` reads in the calendar second that ends at `reset_at`, `per`
 * one job or the whole account (docs/errors.md).
 */
export function jobReadsDetails(over: 'job' | 'account', resetAtMs: number): { limit: number; remaining: 0; reset_at: string; window: 'job_reads'; per: 'job' | 'account' } {
  return {
    limit: over === 'job' ? JOB_READS_PER_SECOND : JOB_READS_PER_ACCOUNT_PER_SECOND,
    remaining: 0,
    reset_at: utcTimestamp(resetAtMs),
    window: 'job_reads',
    per: over,
  };
}

function headerText(value: string | string[] | undefined): string | undefined {
  return typeof value === 'string' ? value : undefined;
}

export async function jobRoutes(app: FastifyInstance, deps: RouteDeps, streams: JobStreams): Promise<void> {
  const jobs = deps.jobs;
  if (!jobs) return;
  const reads = new JobReadCounter();
  const readAllowed = (accountId: number, id: string): void => {
    const now = Date.now();
    const over = reads.take(accountId, id, now);
    if (over === null) return;
    const resetAt = (Math.floor(now / 1000) + 1) * 1000;
    // The limit that was exceeded, as it is (reads a second), not the plan's per-minute figure:
    // job reads are outside the plan's windows.
    throw new RateLimitError(
      over === 'job'
        ? `at most ${JOB_READS_PER_SECOND} reads of one job per second; wait for the next second, or stream it (Accept: application/x-ndjson or text/event-stream)`
        : `at most ${JOB_READS_PER_ACCOUNT_PER_SECOND} reads of jobs per second per account; wait for the next second`,
      jobReadsDetails(over, resetAt),
      { 'retry-after': '1' },
    );
  };

  app.get(
    '/jobs/:id',
    {
      config: { uncounted: true },
      schema: {
        operationId: 'getJob',
        summary: 'A job: its status, progress and result; NDJSON or SSE stream of its items with Accept',
        description:
          `Reading a job is no call and is not limited by the plan (at most ${JOB_READS_PER_SECOND} reads a second per job). ETag / If-None-Match → 304. ` +
          '`Accept: application/x-ndjson` streams one line per completed item (`{seq, index, item}`) then the finished job; ' +
          '`Accept: text/event-stream` the same as Server-Sent Events (`id` = seq; `Last-Event-ID` resumes after it).',
        tags: ['jobs'],
        params: JobParams,
        headers: JobReadHeaders,
        response: { 200: JobRead, 304: JobNotModified },
      },
    },
    async (request, reply) => {
      const account = accountOf(request);
      const { id } = request.params as Static<typeof JobParams>;
      readAllowed(account.id, id);
      const kind = streamKind(request.headers.accept);
      const job = await jobs.find(account.id, id);
      if (!job) throw new JobNotFoundError();
      // Nothing of the result is read for the ETag, nor for a 304, nor once the client has gone.
      const text = await jobs.viewText(job, answerDone(reply));
      const finished = FINISHED_STATUSES.has(job.status);
      const after = kind === 'sse' ? resumeAfter(headerText(request.headers['last-event-id'])) : 0;
      // A stream's tag names its kind (and where an SSE stream resumes); a running job's stream
      // is more than the job as it stood when it began: weak, and never a 304.
      const etag = kind === null ? jobEtag(text.version) : jobEtag(text.version, after > 0 ? `${kind}-${after}` : kind, !finished);
      reply.header('etag', etag).header('cache-control', 'no-cache');
      if ((kind === null || finished) && ifNoneMatch(headerText(request.headers['if-none-match']), etag)) return reply.code(304).send();
      if (kind !== null) return streams.open(reply, account.id, job, after, kind);
      const message = `job ${job.status}: ${job.progress_done} of ${job.progress_total} done`;
      // The envelope of ok(), around the job's text as stored.
      const pieces = jsonPieces(text, '{"success":true,"data":', `,"message":${JSON.stringify(message)}}`);
      reply.type('application/json; charset=utf-8');
      return streamsJson(job) ? sendPieces(reply, pieces) : reply.send(await joined(pieces));
    },
  );

  app.get(
    '/jobs',
    {
      schema: {
        operationId: 'listJobs',
        summary: "The account's jobs, newest first, a page at a time",
        tags: ['jobs'],
        querystring: JobListQuery,
        response: responses(JobList),
      },
    },
    async (request) => {
      const account = accountOf(request);
      const q = request.query as Static<typeof JobListQuery>;
      const page = await jobs.list(account.id, { status: q.status, limit: q.limit ?? JOB_LIST_DEFAULT, cursor: q.cursor });
      return ok(page, `${page.jobs.length} jobs${page.next_cursor ? '; more with next_cursor' : ''}`);
    },
  );

  app.post(
    '/jobs/:id/deliveries',
    {
      config: { uncounted: true },
      schema: {
        operationId: 'redeliverJob',
        summary: "Send a finished job's webhook event again now",
        description:
          'The same event under the same `webhook-id`, signed anew, due at once (an attempt already under way is that sending). ' +
          `No call: like reading a job, it spends nothing of the plan (at most ${JOB_READS_PER_SECOND} a second per job). 409 when the job has not finished or has no \`webhook_url\`.`,
        tags: ['jobs'],
        params: JobParams,
        body: NoBody,
        response: { ...responses(JobRef), 409: errorResponse(409) },
      },
    },
    async (request) => {
      const account = accountOf(request);
      const { id } = request.params as Static<typeof JobParams>;
      readAllowed(account.id, id);
      const view = await jobs.get(account.id, id);
      if (!view) throw new JobNotFoundError();
      if (!deps.jobWebhooks) throw new ConflictError('this server sends no webhooks');
      await deps.jobWebhooks.redeliver(view, account.id);
      return ok(view, `the ${view.status} event of job ${view.id} is queued for ${view.webhook_url}`);
    },
  );

  app.delete(
    '/jobs/:id',
    {
      schema: {
        operationId: 'cancelJob',
        summary: 'Cancel a queued or running job (its sockets close at once)',
        description: 'The job, now `cancelled`; a job that has already finished is a 409.',
        tags: ['jobs'],
        params: JobParams,
        response: { ...responses(JobRef), 409: errorResponse(409) },
      },
    },
    async (request) => {
      const account = accountOf(request);
      const { id } = request.params as Static<typeof JobParams>;
      const outcome = await jobs.cancel(account.id, id);
      if (outcome === undefined) throw new JobNotFoundError();
      if (outcome === 'finished') throw new ConflictError('the job has already finished; only a queued or running job can be cancelled');
      return ok(outcome, 'job cancelled');
    },
  );
}
