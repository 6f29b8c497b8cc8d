import { createHash } from 'node:crypto';
import { Readable } from 'node:stream';
import type { FastifyReply } from 'fastify';
import type { JobRecord } from '../domain/jobs/repository.js';
import type { JobViewText } from '../domain/jobs/views.js';

/**
 * A job read back whole (the API's JSON, the dashboard's downloads): written from its stored
 * batches piece by piece as the client takes it, never built whole in memory (a 65535-port
 * scan's result is 13 MB; ten readers at once held the server for seconds and grew it by
 * hundreds of MB when each built its own copy). The pieces come an iteration of the event loop apart
 * (src/domain/jobs/items.ts, resultItemsRead), a stream waits for the socket to drain, and a
 * client that goes away stops the reading (the stream is destroyed, and with it the reader).
 */

/**
 * Items a JSON answer holds before it is streamed instead of sent as one text (a 1000-port scan's
 * 200 KB is built at once in a few milliseconds); a smaller answer has a Content-Length.
 */
export const JOB_JSON_STREAM_ITEMS = 1000;

/**
 * The ETag of a job's answer, made of what identifies the job as it stands (JobViewText.version:
 * its fields but the result, which the row's status, progress and run say all of), never of the
 * result itself: hashing 13 MB for each read was as costly as sending it. `variant` tells the
 * representations apart (the JSON answer has none; `ndjson`, `sse`); `weak` for a stream of a
 * job still running, whose body is more than its state at the start.
 */
export function jobEtag(version: string, variant = '', weak = false): string {
  const hash = createHash('sha256').update(version).digest('base64url').slice(0, 32);
  return `${weak ? 'W/' : ''}"${hash}${variant === '' ? '' : `-${variant}`}"`;
}

/** RFC 9110 If-None-Match: `*` or any listed tag, weak or strong (the weak comparison). */
export function ifNoneMatch(header: string | undefined, etag: string): boolean {
  if (!header) return false;
  const tag = etag.replace(/^W\//, '');
  return header.split(',').some((t) => {
    const listed = t.trim();
    return listed === '*' || listed.replace(/^W\//, '') === tag;
  });
}

/** Whether `row`'s JSON is streamed: its result is more than one piece of items. */
export function streamsJson(row: JobRecord): boolean {
  return row.result === null && row.progress_done > JOB_JSON_STREAM_ITEMS;
}

/** The job's JSON text between `before` and `after`, piece by piece. */
export async function* jsonPieces(text: JobViewText, before = '', after = ''): AsyncGenerator<string> {
  yield before + text.head;
  yield* text.result;
  yield text.tail + after;
}

/** `pieces` joined: the whole text of a small answer. */
export async function joined(pieces: AsyncIterable<string>): Promise<string> {
  let text = '';
  for await (const piece of pieces) text += piece;
  return text;
}

/** Aborts once the answer is done with (sent whole, or its client went away): what still reads for it stops. */
export function answerDone(reply: FastifyReply): AbortSignal {
  const done = new AbortController();
  reply.raw.once('close', () => done.abort());
  return done.signal;
}

/** Sends `pieces` as the body, each as the socket takes it; the reader stops when the client goes away. */
export function sendPieces(reply: FastifyReply, pieces: AsyncIterable<string>): FastifyReply {
  return reply.send(Readable.from(pieces, { objectMode: false }));
}
