import type { paths } from './generated/schema.js';

export type Method = 'GET' | 'POST' | 'DELETE';

/** What every call may add. */
export interface CallOptions {
  signal?: AbortSignal;
  headers?: Record<string, string>;
}

/** A success: the envelope's `data` and `message`, and the answer (its headers: X-RateLimit-*, Location, ETag). */
export interface Answer<D> {
  data: D;
  message: string;
  response: Response;
}

export type Query = Record<string, string | number | boolean | undefined>;

/** One request: `path` fills the document path's `{name}`s. */
export interface SendInit extends CallOptions {
  path?: Record<string, string>;
  query?: object;
  body?: unknown;
}

/**
 * Makes a request to a path of the document and reads its envelope. The type of `data` is the
 * one the document gives the 200 (the generated methods name it); nothing checks it at run time.
 */
export type Send = <D>(method: Method, path: string, init: SendInit) => Promise<Answer<D>>;

type Paths = keyof paths;
type JobPathOf<K> = K extends `/api${infer P}` ? P : never;
/** The paths (under /api) of the operations that run as jobs: their POST has a 202. */
export type JobPath = JobPathOf<{ [K in Paths]: paths[K] extends { post: { responses: { 202: unknown } } } ? K : never }[Paths]>;
/** What `submit(path, body)` takes: the operation's body for a path it knows, any object for another string. */
export type JobBody<P extends string> = `/api${P}` extends Paths
  ? paths[`/api${P}`] extends { post: { requestBody: { content: { 'application/json': infer B } } } }
    ? B
    : object
  : object;

/** A job (docs/jobs.md), as GET /api/jobs/{id} answers it. */
export type Job = paths['/api/jobs/{id}']['get']['responses'][200]['content']['application/json']['data'];
export type JobStatus = Job['status'];

/** What a job's stream gives: each item as it completes (`seq` its completion order from 1, `index` its place in the result), then the finished job. */
export type JobEvent = { type: 'item'; seq: number; index: number; item: unknown } | { type: 'job'; job: Job };

/** What a webhook delivery carries: the finished job. */
export interface WebhookEvent {
  type: 'job.succeeded' | 'job.failed' | 'job.cancelled';
  /** When the job finished (ISO 8601, UTC). */
  timestamp: string;
  data: Job;
}
