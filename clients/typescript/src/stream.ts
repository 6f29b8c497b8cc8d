import { readLines } from './body.js';
import { NetdiagConnectionError, NetdiagError, errorOf } from './errors.js';
import type { Job, JobEvent } from './types.js';

/**
 * A job's stream (GET /api/jobs/{id} with Accept: text/event-stream or application/x-ndjson):
 * items as they complete, then the finished job. A connection that drops, or a stream that ends
 * or fails before the job's line, is opened again where it stopped (SSE: Last-Event-ID = the last
 * item's seq) and items already given are never given twice (NDJSON starts over: they are skipped).
 */

export interface StreamOptions {
  signal?: AbortSignal;
  /** `sse` (default) resumes on the server's side; `ndjson` starts over and the client skips what it has. */
  format?: 'sse' | 'ndjson';
  /** Reconnections in a row, with no item between them, before the stream gives up (default 5). */
  maxReconnects?: number;
}

export const DEFAULT_MAX_RECONNECTS = 5;
/** Before reconnecting, unless the server said otherwise (SSE `retry:`, Retry-After). */
const RECONNECT_DELAY_MS = 1000;
/** A server may not make a client wait longer than this between two attempts. */
const MAX_RECONNECT_DELAY_MS = 30_000;
/** The highest Last-Event-ID the server reads (nine digits). */
export const LAST_SEQ = 999_999_999;

/** What opens a stream: the answer when it is a 200, else NetdiagError or NetdiagConnectionError. */
export type OpenStream = (id: string, headers: Record<string, string>, signal: AbortSignal | undefined) => Promise<Response>;

type Parsed = JobEvent | { type: 'error'; error: NetdiagError };

function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

const isCount = (n: unknown, min: number): n is number => typeof n === 'number' && Number.isSafeInteger(n) && n >= min;

function invalid(what: string): NetdiagError {
  return new NetdiagError(200, 'invalid_response', `the job stream sent ${what}`);
}

/** One NDJSON line or SSE event's data: an item, the finished job, or the error that ended the stream. */
function parseData(text: string, expect?: 'item' | 'job' | 'error'): Parsed {
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch {
    throw invalid('a line that is not JSON');
  }
  if (!isRecord(value)) throw invalid('a line that is not an object');
  if ((expect ?? ('seq' in value ? 'item' : 'error' in value && !('id' in value) ? 'error' : 'job')) === 'item') {
    if (!isCount(value.seq, 1) || !isCount(value.index, 0) || !('item' in value)) throw invalid('an item without its seq, index and item');
    return { type: 'item', seq: value.seq, index: value.index, item: value.item };
  }
  if ('error' in value && !('id' in value)) return { type: 'error', error: errorOf(0, value.error, new Headers()) };
  if (typeof value.id !== 'string' || typeof value.status !== 'string') throw invalid('a job without its id and status');
  return { type: 'job', job: value as Job };
}

/** The events of an SSE body (the fields of https://html.spec.whatwg.org/multipage/server-sent-events.html). */
async function* sseEvents(body: ReadableStream<Uint8Array>, maxBytes: number, onRetry: (ms: number) => void): AsyncGenerator<Parsed> {
  let event = '';
  let data: string[] = [];
  let size = 0;
  for await (const line of readLines(body, maxBytes, 200)) {
    if (line === '') {
      if (data.length > 0 && (event === 'item' || event === 'job' || event === 'error')) yield parseData(data.join('\n'), event);
      event = '';
      data = [];
      size = 0;
      continue;
    }
    const colon = line.indexOf(':');
    if (colon === 0) continue;
    const field = colon < 0 ? line : line.slice(0, colon);
    const value = colon < 0 ? '' : line.slice(line[colon + 1] === ' ' ? colon + 2 : colon + 1);
    if (field === 'event') event = value;
    else if (field === 'data') {
      size += value.length + 1;
      if (size > maxBytes) throw new NetdiagError(200, 'response_too_large', `an event of the job stream is over ${maxBytes} bytes; refused`);
      data.push(value);
    } else if (field === 'retry' && /^\d{1,9}$/.test(value)) onRetry(Number(value));
  }
}

async function* ndjsonEvents(body: ReadableStream<Uint8Array>, maxBytes: number): AsyncGenerator<Parsed> {
  for await (const line of readLines(body, maxBytes, 200)) if (line.trim() !== '') yield parseData(line);
}

/** Waits `ms`, or rejects with the signal's reason when it aborts first. */
function sleep(ms: number, signal: AbortSignal | undefined): Promise<void> {
  return new Promise((resolve, reject) => {
    if (signal?.aborted) return reject(signal.reason);
    const done = (): void => {
      signal?.removeEventListener('abort', abort);
      resolve();
    };
    const timer = setTimeout(done, ms);
    const abort = (): void => {
      clearTimeout(timer);
      reject(signal?.reason);
    };
    signal?.addEventListener('abort', abort, { once: true });
  });
}

/** Worth another attempt: the stream's own error line (the database went away), too many reads, an unavailable server. */
function transient(err: NetdiagError): boolean {
  return err.status === 0 || err.status === 429 || err.status === 502 || err.status === 503 || err.status === 504;
}

function retryAfterMs(err: unknown): number | undefined {
  const header = err instanceof NetdiagError ? err.headers.get('retry-after') : null;
  return header !== null && /^\d{1,6}$/.test(header.trim()) ? Number(header.trim()) * 1000 : undefined;
}

/** The job's events; `after` skips the items up to that seq (wait() skips them all). */
export async function* jobEvents(open: OpenStream, id: string, maxBytes: number, opts: StreamOptions & { after?: number } = {}): AsyncGenerator<JobEvent> {
  const format = opts.format ?? 'sse';
  const maxReconnects = opts.maxReconnects ?? DEFAULT_MAX_RECONNECTS;
  let after = opts.after ?? 0;
  let delayMs = RECONNECT_DELAY_MS;
  let failures = 0;
  for (;;) {
    let failure: Error;
    try {
      const accept = format === 'sse' ? 'text/event-stream' : 'application/x-ndjson';
      const headers: Record<string, string> = { accept };
      if (format === 'sse' && after > 0) headers['last-event-id'] = String(Math.min(after, LAST_SEQ));
      const response = await open(id, headers, opts.signal);
      const type = response.headers.get('content-type') ?? '';
      if (!type.toLowerCase().startsWith(accept)) {
        await response.body?.cancel();
        throw new NetdiagError(response.status, 'invalid_response', `asked for a stream of job ${id} (${accept}), the server answered ${type.slice(0, 100) || 'no content type'}`, { headers: response.headers });
      }
      if (!response.body) throw new NetdiagConnectionError('the job stream had no body');
      const events =
        format === 'sse'
          ? sseEvents(response.body, maxBytes, (ms) => (delayMs = Math.min(ms, MAX_RECONNECT_DELAY_MS)))
          : ndjsonEvents(response.body, maxBytes);
      let ended: NetdiagError | undefined;
      for await (const event of events) {
        if (event.type === 'error') {
          ended = event.error;
          break;
        }
        if (event.type === 'job') {
          yield event;
          return;
        }
        if (event.seq <= after) continue;
        after = event.seq;
        failures = 0;
        yield event;
      }
      failure = ended ?? new NetdiagConnectionError(`the stream of job ${id} ended before the job finished`);
    } catch (err) {
      if (opts.signal?.aborted) throw opts.signal.reason ?? err;
      if (!(err instanceof NetdiagConnectionError || (err instanceof NetdiagError && transient(err)))) throw err;
      failure = err;
    }
    if (++failures > maxReconnects) throw failure;
    await sleep(Math.min(retryAfterMs(failure) ?? delayMs, MAX_RECONNECT_DELAY_MS), opts.signal);
  }
}
