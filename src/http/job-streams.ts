import type { OutgoingHttpHeaders, ServerResponse } from 'node:http';
import { Readable } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import type { FastifyBaseLogger, FastifyInstance, FastifyReply } from 'fastify';
import { ndjsonAfter, nextLoopIteration, ssePiecesAfter } from '../domain/jobs/items.js';
import type { JobService } from '../domain/jobs/service.js';
import type { JobRecord } from '../domain/jobs/repository.js';
import { FINISHED_STATUSES } from '../domain/jobs/types.js';
import { utcTimestamp } from '../domain/usage/service.js';
import { RateLimitError } from '../errors.js';
import { errorResponseOf } from './plugins/errors.js';

/** How often a stream looks for news written by another process; this one's writes wake it at once. */
export const JOB_STREAM_POLL_MS = 250;
/** Streams one account may hold open at once (each reads the database a few times a second), API and dashboard together. */
export const JOB_STREAMS_PER_ACCOUNT = 16;
/** At shutdown, how long a stream's last bytes get before its connection is cut. */
const STREAM_CLOSE_GRACE_MS = 200;

export type StreamKind = 'ndjson' | 'sse';

export function streamKind(accept: string | undefined): StreamKind | null {
  if (!accept) return null;
  const types = accept.toLowerCase().split(',').map((t) => t.split(';', 1)[0]!.trim());
  if (types.includes('text/event-stream')) return 'sse';
  if (types.includes('application/x-ndjson')) return 'ndjson';
  return null;
}

/** The item sequence number to resume after, from Last-Event-ID; anything not a plain count starts over. */
export function resumeAfter(header: string | undefined): number {
  return header !== undefined && /^\d{1,9}$/.test(header.trim()) ? Number(header.trim()) : 0;
}

/**
 * Stored batches a stream reads at once (~200 KB each for a port scan's): one, as each stream reads
 * its own. Ten NDJSON streams of a full-range result grew the server by 94-107 MB reading 8 at a
 * time, by 63 MB reading one (bench/big-reads.ts, same quiet machine, BENCHMARKS.md).
 */
export const STREAM_READ_BATCHES = 1;

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
  job: JobRecord,
  after: number,
  kind: StreamKind,
  signal: AbortSignal,
  log: FastifyBaseLogger,
): AsyncGenerator<string> {
  if (kind === 'sse') yield 'retry: 1000\n\n';
  const { id } = job;
  // The first pass uses the row the route found the job by (a change since wakes the next pass
  // by the poll at the latest); later passes read it again.
  let known: JobRecord | undefined = job;
  try {
    while (!signal.aborted) {
      // Listening before reading: a change made while we read wakes the next pass at once.
      const changed = jobs.waitForChange(id, JOB_STREAM_POLL_MS, signal);
      // The job's status first: when it is finished, every item is already written.
      const row = known ?? (await jobs.find(accountId, id));
      known = undefined;
      if (!row) return;
      const finished = FINISHED_STATUSES.has(row.status);
      for (let from = after; ; ) {
        // One write per few batches, not per item (a 1000-port scan is a thousand lines), nor
        // all of them at once (a full-range scan's are 13 MB), each in its own iteration of the event loop.
        const batches = await jobs.itemBatches(id, from, STREAM_READ_BATCHES);
        if (batches.length === 0) break;
        // A batch at a time: the stored lines go out as they are, never joined into one string.
        for (const batch of batches) {
          if (kind === 'sse') {
            yield* ssePiecesAfter(batch, after);
            continue;
          }
          const chunk = ndjsonAfter([batch], after);
          if (chunk !== '') yield chunk;
        }
        from = batches[batches.length - 1]!.last_seq;
        after = Math.max(after, from);
        if (batches.length < STREAM_READ_BATCHES || signal.aborted) break;
        await nextLoopIteration();
      }
      if (finished) {
        const { head, result, tail } = await jobs.viewText(row, signal);
        // The result goes out as it is, piece by piece: a full-range scan's is 13 MB, never one string.
        yield kind === 'sse' ? `event: job\ndata: ${head}` : head;
        yield* result;
        yield kind === 'sse' ? `${tail}\n\n` : `${tail}\n`;
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


/**
 * A job's items as they complete, then the finished job, streamed (GET /api/jobs/{id} with
 * Accept, and the dashboard's live progress): one instance per app, so an account's open streams
 * are counted together wherever it opened them, and all of them end when the server closes.
 */
export interface JobStreams {
  /** Streams `job`, which the caller found as the account's (JobService.find). */
  open(reply: FastifyReply, accountId: number, job: JobRecord, after: number, kind: StreamKind): FastifyReply;
}

export function jobStreams(app: FastifyInstance, jobs: JobService): JobStreams {
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

  const openStreams = new Map<number, number>();
  const open = (reply: FastifyReply, accountId: number, job: JobRecord, after: number, kind: StreamKind): FastifyReply => {
    const already = openStreams.get(accountId) ?? 0;
    if (already >= JOB_STREAMS_PER_ACCOUNT) {
      throw new RateLimitError(
        `at most ${JOB_STREAMS_PER_ACCOUNT} job streams open at once per account; close one, or read the job without streaming`,
        { limit: JOB_STREAMS_PER_ACCOUNT, remaining: 0, reset_at: utcTimestamp(Date.now() + 1000), window: 'job_reads', per: 'account' },
        { 'retry-after': '1' },
      );
    }
    openStreams.set(accountId, already + 1);
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
    pipeline(Readable.from(streamLines(jobs, accountId, job, after, kind, abort.signal, reply.log), { objectMode: false }), reply.raw).then(end, end);
    return reply;
  };
  return { open };
}
