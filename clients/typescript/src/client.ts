import createFetchClient, { type Middleware } from 'openapi-fetch';
import { DEFAULT_MAX_BYTES, readText } from './body.js';
import { NetdiagConnectionError, NetdiagError, errorOf } from './errors.js';
import { operations, type Operations } from './generated/operations.js';
import { jobEvents, LAST_SEQ, type StreamOptions } from './stream.js';
import type { Answer, CallOptions, Job, JobBody, JobEvent, JobPath, Method, Query, SendInit } from './types.js';

export interface ClientOptions {
  /** Where the server is: `http://localhost:8080` (the API is under its /api). */
  baseUrl: string;
  /** An API token: sent as `Authorization: Bearer <token>`. */
  token?: string;
  /** A fetch to use instead of the global one. */
  fetch?: typeof fetch;
  /** Headers sent with every request. */
  headers?: Record<string, string>;
  /** The most an answer, or one line of a job's stream, may hold (default 64 MiB); more is refused. */
  maxBytes?: number;
}

export interface RequestInit {
  body?: unknown;
  query?: Query;
  headers?: Record<string, string>;
  signal?: AbortSignal;
}

export interface SubmitOptions extends CallOptions {
  /** Where the finished job is POSTed, signed (verify it with verifyWebhook). */
  webhookUrl?: string;
}

export interface NetdiagClient extends Operations {
  /**
   * Any path under /api (`'/dns/lookup'`), untyped: `data` is the envelope's, or the text of an
   * answer that is not JSON (CSV). An error answer throws NetdiagError.
   */
  request(method: Method, path: string, init?: RequestInit): Promise<Answer<unknown>>;
  /**
   * Runs a POST endpoint as a job (Prefer: respond-async): the queued job, from the 202. The body
   * is typed for a path the document has (`'/port/scan-range'`), any object for another string.
   */
  submit<P extends JobPath | (string & {})>(path: P, body: JobBody<P>, opts?: SubmitOptions): Promise<Job>;
  /** The job once it has finished (succeeded, failed or cancelled), over one stream that carries only its end. */
  wait(id: string, opts?: { signal?: AbortSignal }): Promise<Job>;
  /** The job's items as they complete, then the finished job; reconnects and resumes when the connection drops. */
  stream(id: string, opts?: StreamOptions): AsyncIterable<JobEvent>;
}

/**
 * openapi-fetch's request() without its types: the generated methods carry the document's types,
 * and request() takes any path; both come through here.
 */
type UntypedRequest = (
  method: string,
  path: string,
  init: { params: { path: Record<string, string>; query: object }; body?: unknown; headers?: Record<string, string>; signal?: AbortSignal; parseAs: 'stream' },
) => Promise<{ response: Response; error?: unknown }>;

const API = '/api';

function apiPath(path: string): string {
  if (!path.startsWith('/')) throw new TypeError(`a path under /api starts with '/': ${JSON.stringify(path)}`);
  return API + path;
}

function isJson(response: Response): boolean {
  return /^application\/(?:[\w.+-]+\+)?json\b/i.test(response.headers.get('content-type') ?? '');
}

export function createClient(opts: ClientOptions): NetdiagClient {
  if (!/^https?:\/\//i.test(opts.baseUrl)) throw new TypeError(`baseUrl must be an http(s) URL: ${JSON.stringify(opts.baseUrl)}`);
  const maxBytes = opts.maxBytes ?? DEFAULT_MAX_BYTES;
  const baseUrl = opts.baseUrl.replace(/\/+$/, '');
  const headers: Record<string, string> = { ...opts.headers };
  if (opts.token !== undefined) headers.authorization = `Bearer ${opts.token}`;
  const fetchFn = opts.fetch ?? ((input: Request) => globalThis.fetch(input));
  const api = createFetchClient({ baseUrl, headers, fetch: (input) => fetchFn(input) });
  const request = api.request as unknown as UntypedRequest;
  // An error answer's body is read here, bounded, before openapi-fetch reads it whole.
  const boundedErrors: Middleware = {
    async onResponse({ response }) {
      if (response.status < 400) return undefined;
      const text = await readText(response, maxBytes);
      return new Response(text, { status: response.status, statusText: response.statusText, headers: response.headers });
    },
  };
  api.use(boundedErrors);

  /** The answer when it is a success; an error answer throws NetdiagError, no answer NetdiagConnectionError. */
  async function open(method: Method, path: string, init: SendInit): Promise<Response> {
    let result: { response: Response; error?: unknown };
    try {
      result = await request(method, path, {
        params: { path: init.path ?? {}, query: init.query ?? {} },
        ...(init.body !== undefined ? { body: init.body } : {}),
        ...(init.headers ? { headers: init.headers } : {}),
        ...(init.signal ? { signal: init.signal } : {}),
        parseAs: 'stream',
      });
    } catch (err) {
      // The caller's abort, and what the error body's reading said (too large, cut short), as they are.
      if (init.signal?.aborted || err instanceof NetdiagError || err instanceof NetdiagConnectionError) throw err;
      const cause = err instanceof Error && err.cause instanceof Error ? `: ${err.cause.message}` : err instanceof Error ? `: ${err.message}` : '';
      throw new NetdiagConnectionError(`could not reach ${baseUrl}${cause}`, { cause: err });
    }
    const { response } = result;
    if (response.status >= 400) throw errorOf(response.status, result.error, response.headers);
    return response;
  }

  async function send<D>(method: Method, path: string, init: SendInit): Promise<Answer<D>> {
    const response = await open(method, path, init);
    const text = await readText(response, maxBytes);
    if (text === '' || !isJson(response)) return { data: (text === '' ? undefined : text) as D, message: '', response };
    let body: unknown;
    try {
      body = JSON.parse(text);
    } catch {
      throw new NetdiagError(response.status, 'invalid_response', `the server's answer to ${method} ${path} is not JSON`, { headers: response.headers });
    }
    if (typeof body !== 'object' || body === null || !('data' in body)) {
      throw new NetdiagError(response.status, 'invalid_response', `the server's answer to ${method} ${path} has no data`, { headers: response.headers });
    }
    const message = 'message' in body && typeof body.message === 'string' ? body.message : '';
    return { data: body.data as D, message, response };
  }

  const openStream = (id: string, streamHeaders: Record<string, string>, signal: AbortSignal | undefined) =>
    open('GET', `${API}/jobs/{id}`, { path: { id }, headers: streamHeaders, ...(signal ? { signal } : {}) });

  return {
    ...operations(send),
    request: (method, path, init = {}) => send<unknown>(method, apiPath(path), init),
    async submit(path, body, submitOpts = {}) {
      const { webhookUrl, ...call } = submitOpts;
      const answer = await send<Job>('POST', apiPath(path), {
        ...call,
        body: webhookUrl === undefined ? body : Object.assign({}, body, { webhook_url: webhookUrl }),
        headers: { ...call.headers, prefer: 'respond-async' },
      });
      if (answer.response.status !== 202) {
        throw new NetdiagError(answer.response.status, 'invalid_response', `the server ran ${path} at once (HTTP ${answer.response.status}) instead of as a job`, { headers: answer.response.headers });
      }
      return answer.data;
    },
    async wait(id, waitOpts = {}) {
      // Resuming after the last possible item: the stream sends nothing but the finished job.
      for await (const event of jobEvents(openStream, id, maxBytes, { ...waitOpts, format: 'sse', after: LAST_SEQ })) {
        if (event.type === 'job') return event.job;
      }
      throw new NetdiagConnectionError(`the stream of job ${id} ended without the job`);
    },
    stream: (id, streamOpts = {}) => jobEvents(openStream, id, maxBytes, streamOpts),
  };
}
