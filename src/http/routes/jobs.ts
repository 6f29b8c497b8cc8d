import { createHash } from 'node:crypto';
import type { OutgoingHttpHeaders, ServerResponse } from 'node:http';
import { Readable } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import type { FastifyBaseLogger, FastifyInstance, FastifyReply } from 'fastify';
import type { Static } from 'typebox';
import { planLimits } from '../../domain/accounts/plans.js';
import { ndjsonAfter, sseAfter } from '../../domain/jobs/items.js';
import { JOB_ITEMS_PAGE, type JobService } from '../../domain/jobs/service.js';
import type { JobItemBatch } from '../../domain/jobs/repository.js';
import { FINISHED_STATUSES, type JobView } from '../../domain/jobs/types.js';
import { utcTimestamp } from '../../domain/usage/service.js';
import { ConflictError, JobNotFoundError, RateLimitError } from '../../errors.js';
import { accountOf } from '../plugins/auth.js';
import { errorResponseOf } from '../plugins/errors.js';
import { ok } from '../reply.js';
import { NoBody, responses } from '../schemas/common.js';
import { errorResponse } from '../schemas/errors.js';
import { JOB_LIST_DEFAULT, JobList, JobListQuery, JobNotModified, JobParams, JobRead, JobReadHeaders, JobRef } from '../schemas/jobs.js';
import type { RouteDeps } from './deps.js';

/** Reads of one job an account may make per second (API.md): polling faster than this gains nothing. */
export const JOB_READS_PER_SECOND = 10;
/** Jobs whose reads are counted at once; past it the counts start over (a second's worth is lost at most). */
const READ_COUNTERS_MAX = 10_000;
/** How often a stream looks for news written by another process; this one's writes wake it at once. */
export const JOB_STREAM_POLL_MS = 250;
/** Streams one account may hold open at once (each reads the database a few times a second). */
export const JOB_STREAMS_PER_ACCOUNT = 16;
/** At shutdown, how long a stream's last bytes get before its connection is cut. */
const STREAM_CLOSE_GRACE_MS = 200;

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
  readonly #counts = new Map<string, { second: number; n: number }>();

  take(accountId: number, id: string, now: number): 'job' | 'account' | null {
    const second = Math.floor(now / 1000);
    if (!this.#take(String(accountId), second, JOB_READS_PER_ACCOUNT_PER_SECOND)) return 'account';
    return this.#take(`${accountId}:${id}`, second, JOB_READS_PER_SECOND) ? null : 'job';
  }

  #take(key: string, second: number, max: number): boolean {
    const c = this.#counts.get(key);
    if (c && c.second === second) return ++c.n <= max;
    if (this.#counts.size >= READ_COUNTERS_MAX) this.#counts.clear();
    this.#counts.set(key, { second, n: 1 });
    return true;
  }
}

function etagOf(view: JobView): string {
  return `"${createHash('sha256').update(JSON.stringify(view)).digest('base64url').slice(0, 32)}"`;
}

/** RFC 9110 If-None-Match: `*` or any listed tag, weak or strong (the weak comparison). */
function matches(header: string | undefined, etag: string): boolean {
  if (!header) return false;
  return header.split(',').some((t) => {
    const tag = t.trim();
    return tag === '*' || tag.replace(/^W\//, '') === etag;
  });
}

type StreamKind = 'ndjson' | 'sse';

function streamKind(accept: string | undefined): StreamKind | null {
  if (!accept) return null;
  const types = accept.toLowerCase().split(',').map((t) => t.split(';', 1)[0]!.trim());
  if (types.includes('text/event-stream')) return 'sse';
  if (types.includes('application/x-ndjson')) return 'ndjson';
  return null;
}

/** The item sequence number to resume after, from Last-Event-ID; anything not a plain count starts over. */
function resumeAfter(header: string | undefined): number {
  return header !== undefined && /^\d{1,9}$/.test(header.trim()) ? Number(header.trim()) : 0;
}

/**
 * Items as they complete, then the finished job, as NDJSON lines or SSE events. It reads the
 * database (another process may be running the job) and is woken at once by this one's writes.
 * A read that fails mid-stream (the database went away) ends it with a last line saying so,
 * `{"error": <the error body a request would get>}` (SSE: an `error` event with that data),
 * instead of a connection cut without a word; an SSE client reconnects and resumes by its id.
 */
async function* streamLines(
  jobs: JobService,
  accountId: number,
  id: string,
  after: number,
  kind: StreamKind,
  signal: AbortSignal,
  log: FastifyBaseLogger,
): AsyncGenerator<string> {
  if (kind === 'sse') yield 'retry: 1000\n\n';
  try {
    while (!signal.aborted) {
      // Listening before reading: a change made while we read wakes the next turn at once.
      const changed = jobs.waitForChange(id, JOB_STREAM_POLL_MS, signal);
      // The job's status first: when it is finished, every item is already written.
      const row = await jobs.find(accountId, id);
      if (!row) return;
      const finished = FINISHED_STATUSES.has(row.status);
      // Once it has finished, the read starts at the first item: the same batches give the items
      // not sent yet and the result in the last line (one read of them, not two).
      const read: JobItemBatch[] = [];
      for (let from = finished ? 0 : after; ; ) {
        // One write per page of batches, not per item: a 1000-port scan is a thousand lines.
        const batches = await jobs.itemBatches(id, from, JOB_ITEMS_PAGE);
        if (batches.length === 0) break;
        if (finished) read.push(...batches);
        const chunk = kind === 'sse' ? sseAfter(batches, after) : ndjsonAfter(batches, after);
        from = batches[batches.length - 1]!.last_seq;
        after = Math.max(after, from);
        if (chunk !== '') yield chunk;
        if (batches.length < JOB_ITEMS_PAGE || signal.aborted) break;
      }
      if (finished) {
        const job = await jobs.viewText(row, read);
        yield kind === 'sse' ? `event: job\ndata: ${job}\n\n` : `${job}\n`;
        return;
      }
      await changed;
    }
  } catch (err) {
    // Nobody is left to tell when the client has gone or the server is closing.
    if (signal.aborted) return;
    const { status, body } = errorResponseOf(err);
    // As the error handler does: our own fault is logged, a database outage is not (per stream).
    if (status === 500) log.error({ err }, 'job stream: unhandled error; the stream ended with an error line');
    const data = JSON.stringify({ error: body });
    yield kind === 'sse' ? `event: error\ndata: ${data}\n\n` : `${data}\n`;
  }
}

export async function jobRoutes(app: FastifyInstance, deps: RouteDeps): Promise<void> {
  const jobs = deps.jobs;
  if (!jobs) return;
  const reads = new JobReadCounter();
  // Streams end when the server closes, so that they never hold its shutdown.
  const streams = new Map<AbortController, ServerResponse>();
  app.addHook('preClose', (done) => {
    for (const [abort, res] of streams) {
      // The stream ends at once; its connection is closed as soon as the end is written (a client
      // that stopped reading would otherwise hold the server's close until its socket lapsed).
      res.once('finish', () => res.destroy());
      setTimeout(() => res.destroy(), STREAM_CLOSE_GRACE_MS).unref();
      abort.abort();
    }
    done();
  });

  const readAllowed = (accountId: number, id: string, plan: string): void => {
    const now = Date.now();
    const over = reads.take(accountId, id, now);
    if (over === null) return;
    const resetAt = (Math.floor(now / 1000) + 1) * 1000;
    throw new RateLimitError(
      over === 'job'
        ? `at most ${JOB_READS_PER_SECOND} reads of one job per second; wait for the next second, or stream it (Accept: application/x-ndjson or text/event-stream)`
        : `at most ${JOB_READS_PER_ACCOUNT_PER_SECOND} reads of jobs per second per account; wait for the next second`,
      { limit: planLimits(plan).requests_per_minute, remaining: 0, reset_at: utcTimestamp(resetAt), window: 'job_reads' },
      { 'retry-after': '1' },
    );
  };

  const openStreams = new Map<number, number>();
  const stream = (reply: FastifyReply, accountId: number, plan: string, id: string, after: number, kind: StreamKind): FastifyReply => {
    const open = openStreams.get(accountId) ?? 0;
    if (open >= JOB_STREAMS_PER_ACCOUNT) {
      throw new RateLimitError(
        `at most ${JOB_STREAMS_PER_ACCOUNT} job streams open at once per account; close one, or read the job without streaming`,
        { limit: planLimits(plan).requests_per_minute, remaining: 0, reset_at: utcTimestamp(Date.now() + 1000), window: 'job_reads' },
        { 'retry-after': '1' },
      );
    }
    openStreams.set(accountId, open + 1);
    const abort = new AbortController();
    streams.set(abort, reply.raw);
    let ended = false;
    const end = (): void => {
      abort.abort();
      streams.delete(abort);
      if (ended) return;
      ended = true;
      const left = (openStreams.get(accountId) ?? 1) - 1;
      if (left > 0) openStreams.set(accountId, left);
      else openStreams.delete(accountId);
    };
    // The client went away: stop reading for it.
    reply.raw.once('close', end);
    // Written by hand, so the headers go out at once: a client waiting for its first item knows the stream is open.
    reply.hijack();
    const headers: OutgoingHttpHeaders = {
      ...(reply.getHeaders() as OutgoingHttpHeaders),
      'content-type': kind === 'sse' ? 'text/event-stream; charset=utf-8' : 'application/x-ndjson; charset=utf-8',
      'cache-control': 'no-store',
      'x-content-type-options': 'nosniff',
      'x-accel-buffering': 'no',
      // The connection ends with the stream: one left idle would hold a closing server until its keep-alive lapses.
      connection: 'close',
    };
    reply.raw.writeHead(200, headers);
    reply.raw.flushHeaders();
    pipeline(Readable.from(streamLines(jobs, accountId, id, after, kind, abort.signal, reply.log), { objectMode: false }), reply.raw).then(end, end);
    return reply;
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
      readAllowed(account.id, id, account.plan);
      const kind = streamKind(request.headers.accept);
      if (kind !== null) {
        if (!(await jobs.find(account.id, id))) throw new JobNotFoundError();
        const lastEventId = request.headers['last-event-id'];
        return stream(reply, account.id, account.plan, id, kind === 'sse' ? resumeAfter(typeof lastEventId === 'string' ? lastEventId : undefined) : 0, kind);
      }
      const view = await jobs.get(account.id, id);
      if (!view) throw new JobNotFoundError();
      const etag = etagOf(view);
      reply.header('etag', etag).header('cache-control', 'no-cache');
      if (matches(request.headers['if-none-match'], etag)) return reply.code(304).send();
      return ok(view, `job ${view.status}: ${view.progress.done} of ${view.progress.total} done`);
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
      readAllowed(account.id, id, account.plan);
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
