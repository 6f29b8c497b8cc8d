/**
 * Sends one webhook POST over a socket from THE dialer (infra/net/dialer.ts, by way of
 * ../net/connector.ts): the URL's host is resolved and every address checked against the target
 * policy, and the connection goes to the checked address, so a name that re-resolves elsewhere
 * (DNS rebinding) cannot redirect it.
 * node:http only frames the request on that socket (`createConnection`); it never resolves or
 * connects by itself, never follows a redirect, and the answer's body is read no further than
 * MAX_RESPONSE_BYTES before the socket is dropped.
 */
import type net from 'node:net';
import { performance } from 'node:perf_hooks';
import { AppError, DialError, ResolveError, ValidationError, WebhookAbortedError } from '../../errors.js';
import { round2 } from '../../lib/round.js';
import type { WebhookResponse, WebhookSendRequest, WebhookTransport } from '../../domain/webhooks/delivery.js';
import type { Dialer } from '../net/dialer.js';
import { hostOf } from '../../lib/url.js';
import { openDialed, send, urlRequest } from '../net/connector.js';

/** Of a receiver's answer, at most this much is read; then the socket is dropped. */
export const MAX_RESPONSE_BYTES = 4_096;
/** Once the status is in, the body (which nobody needs) is waited for no longer than this. */
export const RESPONSE_DRAIN_MS = 1_000;
export const WEBHOOK_USER_AGENT = 'netdiag-webhooks/1';

export interface DialerWebhookTransportOptions {
  /** Extra CA certificates trusted for https receivers (tests: the loopback fixture's). */
  ca?: string | Buffer;
}

export class DialerWebhookTransport implements WebhookTransport {
  readonly #dialer: Dialer;
  readonly #ca: string | Buffer | undefined;

  constructor(dialer: Dialer, opts: DialerWebhookTransportOptions = {}) {
    this.#dialer = dialer;
    this.#ca = opts.ca;
  }

  /** Resolves and checks the URL's host (400 when it does not resolve, 403 when forbidden). */
  async check(url: URL, field: string): Promise<void> {
    try {
      await this.#dialer.resolve(hostOf(url), { field });
    } catch (err) {
      // A name that does not exist is a mistake in the URL; a resolver that timed out is ours,
      // and the delivery will resolve it again anyway.
      if (err instanceof ResolveError && (err.code === 'ENOTFOUND' || err.code === 'ENODATA')) {
        throw new ValidationError(field, `${url.hostname} does not resolve (${err.code})`);
      }
      if (err instanceof ResolveError) return;
      throw err;
    }
  }

  async send(req: WebhookSendRequest): Promise<WebhookResponse> {
    const started = performance.now();
    const deadline = AbortSignal.timeout(req.timeoutMs);
    const signal = req.signal ? AbortSignal.any([deadline, req.signal]) : deadline;
    let socket: net.Socket | undefined;
    const done = (status: number | null, error: string | null, retryAfter?: string): WebhookResponse => ({
      status,
      error,
      duration_ms: round2(performance.now() - started),
      ...(retryAfter !== undefined ? { retry_after: retryAfter } : {}),
    });
    try {
      const url = new URL(req.url);
      // Checked again at every attempt: the name may point somewhere else by now.
      socket = await openDialed(this.#dialer, url, {
        field: 'webhook_url',
        timeoutMs: req.timeoutMs,
        signal,
        owner: req.owner,
        aborted: () => new WebhookAbortedError(),
        ca: this.#ca,
      });
      const { status, retryAfter } = await this.#post(socket, url, req, signal);
      if (status >= 200 && status < 300) return done(status, null);
      if (status >= 300 && status < 400) return done(status, `redirect (${status}) not followed`, retryAfter);
      return done(status, `HTTP ${status}`, retryAfter);
    } catch (err) {
      if (err instanceof WebhookAbortedError || deadline.aborted) {
        return done(null, deadline.aborted ? `no answer within ${req.timeoutMs} ms` : 'aborted');
      }
      return done(null, reasonOf(err));
    } finally {
      socket?.destroy();
    }
  }

  /**
   * POSTs on the connected socket; resolves the status (and Retry-After, which node keeps one of,
   * within its header size limit) once the answer's head and at most MAX_RESPONSE_BYTES are in.
   */
  async #post(socket: net.Socket, url: URL, req: WebhookSendRequest, signal: AbortSignal): Promise<{ status: number; retryAfter: string | undefined }> {
    const body = Buffer.from(req.body);
    const { res, request } = await send(
      socket,
      urlRequest(url, 'POST', { 'content-type': 'application/json', 'content-length': body.length, 'user-agent': WEBHOOK_USER_AGENT, ...req.headers }, body),
      { signal, aborted: () => new WebhookAbortedError() },
    );
    return new Promise((resolve, reject) => {
      // A reset while the body drains is the attempt's error, as before the head.
      request.on('error', reject);
      // The status is the answer; the body is read (politely, a little) only until it ends,
      // MAX_RESPONSE_BYTES have come, RESPONSE_DRAIN_MS have passed, or the deadline.
      const status = res.statusCode ?? 0;
      const retryAfter = res.headers['retry-after'];
      let read = 0;
      let finished = false;
      const finish = (): void => {
        if (finished) return;
        finished = true;
        clearTimeout(drain);
        signal.removeEventListener('abort', finish);
        res.removeAllListeners('data');
        res.on('error', () => undefined);
        // Whatever the receiver sends after this is never read.
        socket.destroy();
        resolve({ status, retryAfter });
      };
      signal.addEventListener('abort', finish, { once: true });
      const drain = setTimeout(finish, RESPONSE_DRAIN_MS);
      res.on('data', (chunk: Buffer) => {
        read += chunk.length;
        if (read >= MAX_RESPONSE_BYTES) finish();
      });
      res.once('end', finish);
      res.once('error', finish);
    });
  }
}

/** Short text for an attempt's `error`. */
function reasonOf(err: unknown): string {
  if (err instanceof DialError) return err.reason;
  if (err instanceof AppError || err instanceof ResolveError) return err.message;
  const code = (err as NodeJS.ErrnoException | undefined)?.code;
  if (code === 'ECONNRESET') return 'connection reset';
  if (typeof code === 'string' && code.startsWith('HPE_')) return 'not an HTTP response';
  return err instanceof Error ? err.message : String(err);
}
