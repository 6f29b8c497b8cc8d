/**
 * Job webhooks (docs/jobs.md): when a job finishes, one event is queued in the
 * database with one webhook-id for all its retries; each attempt is signed afresh (Standard
 * Webhooks: the timestamp is the attempt's, and a rotation's previous secret signs too while it
 * overlaps), sent through a WebhookTransport that applies the target policy, and recorded.
 * The queue that runs attempts is the webhook queue's implementation, not here.
 */
import { ConflictError } from '../../errors.js';
import type { Clock } from '../accounts/service.js';
import { allItemBatches, jobViewOf } from '../jobs/service.js';
import { resultTextOf } from '../jobs/items.js';
import type { JobEventType, JobView, JobWebhooks, WebhookAttemptView } from '../jobs/types.js';
import type { JobRecord } from '../jobs/repository.js';
import type { Store } from '../store.js';
import type { ClaimedWebhookDelivery, WebhookAttemptOutcome } from './repository.js';
import type { WebhookSecrets } from './secrets.js';
import { newWebhookId, signedHeaders } from './signing.js';
import { parseWebhookUrl } from './url.js';
import { NO_METRICS, type Metrics } from '../metrics.js';
import { retryAfterMs } from '../../lib/retry-after.js';

const MINUTE_MS = 60_000;
const HOUR_MS = 60 * MINUTE_MS;

/**
 * Waits before the 2nd..10th attempt: docs/webhooks.md's Standard Webhooks schedule (5 s, 5 min, 30 min,
 * 2 h, 5 h, 10 h, 14 h, 20 h, 24 h). The first attempt is at once; when the one after the last
 * delay fails too (the 10th, about 80 h after the first), the event is given up. The one table:
 * the docs, the OpenAPI text and the dashboard are written from it.
 */
export const WEBHOOK_RETRY_DELAYS_MS: readonly number[] = Object.freeze([
  5_000,
  5 * MINUTE_MS,
  30 * MINUTE_MS,
  2 * HOUR_MS,
  5 * HOUR_MS,
  10 * HOUR_MS,
  14 * HOUR_MS,
  20 * HOUR_MS,
  24 * HOUR_MS,
]);
/** Every delay is spread by up to this share either way (docs/webhooks.md: ±10 %), so retries of many events do not arrive together. */
export const WEBHOOK_RETRY_JITTER = 0.1;
/** A receiver's 2xx must arrive within this (resolve, connect, TLS, answer); docs/webhooks.md: 15 s. */
export const WEBHOOK_TIMEOUT_MS = 15_000;
/** The HTTP status by which a receiver says "stop sending": no retry follows. */
export const WEBHOOK_GONE_STATUS = 410;
/**
 * The statuses whose Retry-After is honoured (docs/webhooks.md: 429 Too Many Requests, 503 Service
 * Unavailable, the two where HTTP gives it that meaning for a retry). On any other status it is
 * ignored: a 3xx's Retry-After is about following a redirect, which a delivery never does, and a
 * 500 or 4xx gives it no defined meaning.
 */
export const WEBHOOK_RETRY_AFTER_STATUSES: ReadonlySet<number> = new Set([429, 503]);
/**
 * The longest wait a Retry-After can add: the schedule's longest delay (24 h). A receiver that
 * asks for more (a year, a date in 2099) gets its next attempt 24 h after this one, not never:
 * the event still ends within the schedule's attempts, and a typo cannot park it for years.
 */
export const WEBHOOK_RETRY_AFTER_MAX_MS = 24 * HOUR_MS;

/** "5 s", "30 min", "2 h": a delay of the schedule as the docs write it. */
export function delayText(ms: number): string {
  if (ms >= HOUR_MS && ms % HOUR_MS === 0) return `${ms / HOUR_MS} h`;
  if (ms >= MINUTE_MS && ms % MINUTE_MS === 0) return `${ms / MINUTE_MS} min`;
  return ms % 1_000 === 0 ? `${ms / 1_000} s` : `${ms} ms`;
}

/**
 * The delivery rule in one sentence, from the constants above: the OpenAPI document's webhooks
 * and the dashboard's job page say it so, and cannot drift from what the server does.
 */
export const WEBHOOK_SCHEDULE_TEXT =
  `A delivery that gets no 2xx within ${delayText(WEBHOOK_TIMEOUT_MS)} is retried ` +
  `(${WEBHOOK_RETRY_DELAYS_MS.map(delayText).join(', ')}, each ±${Math.round(WEBHOOK_RETRY_JITTER * 100)} %), ` +
  `never sooner than a \`Retry-After\` sent with a ${[...WEBHOOK_RETRY_AFTER_STATUSES].join(' or ')} ` +
  `(at most ${delayText(WEBHOOK_RETRY_AFTER_MAX_MS)} is honoured); a ${WEBHOOK_GONE_STATUS} stops the retries.`;

const FIELD = 'webhook_url';

export interface WebhookSendRequest {
  url: string;
  headers: Record<string, string>;
  body: string;
  timeoutMs: number;
  /** Whose socket this is, for the dialer's fair share of the global budget. */
  owner?: string;
  signal?: AbortSignal;
}

export interface WebhookResponse {
  /** The receiver's status, or null when there was none. */
  status: number | null;
  /** null for a 2xx; otherwise why the attempt failed. */
  error: string | null;
  duration_ms: number;
  /** The answer's Retry-After header as sent, when it had one (hostile: parsed bounded, by the delivery). */
  retry_after?: string | null;
}

/** How a webhook reaches its receiver: resolved, checked against the target policy and pinned (the webhook sender). */
export interface WebhookTransport {
  /** Throws ValidationError (does not resolve) or TargetForbiddenError (a blocked address). */
  check(url: URL, field: string): Promise<void>;
  /** Never throws: every outcome, a forbidden address included, is a response to record. */
  send(request: WebhookSendRequest): Promise<WebhookResponse>;
}

/** The event type of a finished job's status. */
export function eventTypeOf(job: JobView): JobEventType | null {
  switch (job.status) {
    case 'succeeded':
      return 'job.succeeded';
    case 'failed':
      return 'job.failed';
    case 'cancelled':
      return 'job.cancelled';
    default:
      return null;
  }
}

export interface WebhookDeliveryOptions {
  store: Store;
  secrets: WebhookSecrets;
  transport: WebhookTransport;
  clock?: Clock;
  /** WEBHOOK_RETRY_DELAYS_MS unless given (tests: milliseconds). */
  retryDelaysMs?: readonly number[];
  /** Where the jitter comes from, [0, 1); Math.random unless given (tests: the extremes). */
  random?: () => number;
  /** WEBHOOK_TIMEOUT_MS unless given. */
  timeoutMs?: number;
  /** Told after an event is queued, so the queue can send it at once. */
  onQueued?: () => void;
  /** Where failures of a fire-and-forget enqueue (and of one job's recovery) go. */
  onError?: (err: unknown) => void;
  /** How enqueueMissed builds a job's view from its row; rowView unless given. */
  viewOf?: (row: JobRecord) => Promise<JobView>;
  /** Told of every attempt recorded; NO_METRICS unless given. */
  metrics?: Metrics;
}

/**
 * A finished job's view from its row, built as JobService.view builds it, for an event queued
 * after the fact (enqueueMissed). One difference, for want of the endpoint's operation: a job
 * that ended without a result shows its items so far when it has some, and null when it has
 * none (JobService.view shows [] for a bulk call that ended before its first item). The app makes
 * it exact by giving WebhookDelivery JobViews.view as `viewOf` (src/compose.ts).
 */
export function rowView(store: Store): (row: JobRecord) => Promise<JobView> {
  return async (row) => {
    let result: unknown = row.result === null ? null : JSON.parse(row.result);
    if (row.result === null) {
      const batches = await allItemBatches(store.jobs, row.id);
      if (batches.length > 0) result = JSON.parse(resultTextOf(batches));
    }
    return jobViewOf(row, result);
  };
}

export class WebhookDelivery implements JobWebhooks {
  readonly #store: Store;
  readonly #secrets: WebhookSecrets;
  readonly #transport: WebhookTransport;
  readonly #clock: Clock;
  readonly #random: () => number;
  readonly retryDelaysMs: readonly number[];
  readonly timeoutMs: number;
  /** Told after an event is queued (the queue's kick): given at construction, never set afterwards. */
  readonly onQueued: (() => void) | undefined;
  /** How enqueueMissed builds a job's view (WebhookDeliveryOptions.viewOf). */
  readonly #viewOf: (row: JobRecord) => Promise<JobView>;
  readonly #onError: (err: unknown) => void;
  readonly #metrics: Metrics;

  constructor(opts: WebhookDeliveryOptions) {
    const delays = opts.retryDelaysMs ?? WEBHOOK_RETRY_DELAYS_MS;
    if (!delays.every((d) => Number.isFinite(d) && d >= 0)) throw new RangeError('WebhookDelivery: retryDelaysMs must be non-negative numbers');
    const timeoutMs = opts.timeoutMs ?? WEBHOOK_TIMEOUT_MS;
    if (!(timeoutMs > 0) || !Number.isFinite(timeoutMs)) throw new RangeError(`WebhookDelivery: timeoutMs must be a positive number, got ${timeoutMs}`);
    this.#store = opts.store;
    this.#secrets = opts.secrets;
    this.#transport = opts.transport;
    this.#clock = opts.clock ?? (() => new Date());
    this.#random = opts.random ?? Math.random;
    this.retryDelaysMs = delays;
    this.timeoutMs = timeoutMs;
    this.onQueued = opts.onQueued;
    this.#onError = opts.onError ?? (() => undefined);
    this.#viewOf = opts.viewOf ?? rowView(opts.store);
    this.#metrics = opts.metrics ?? NO_METRICS;
  }

  async checkUrl(url: string): Promise<void> {
    await this.#transport.check(parseWebhookUrl(url), FIELD);
  }

  /**
   * Queues the job's event (when it has a webhook URL). The promise resolves once the event is
   * in the database; a caller that does not wait still gets it queued, failures go to onError.
   * A job that finishes twice (run again after a crash) is still one event.
   */
  finished(job: JobView, accountId: number): Promise<void> {
    const work = this.enqueue(job, accountId).then(
      (queued) => {
        if (queued) this.onQueued?.();
      },
      (err: unknown) => this.#onError(err),
    );
    return work;
  }

  /** true when the event was queued now; false when the job has no URL, is not finished, or was queued before. */
  async enqueue(job: JobView, accountId: number): Promise<boolean> {
    const type = eventTypeOf(job);
    if (job.webhook_url === null || type === null) return false;
    const now = this.#clock();
    const { webhook_deliveries: _attempts, ...data } = job;
    const payload = JSON.stringify({ type, timestamp: job.finished_at ?? now.toISOString(), data });
    return this.#store.webhookDeliveries.enqueue({
      webhook_id: newWebhookId(),
      job_id: job.id,
      account_id: accountId,
      url: job.webhook_url,
      event_type: type,
      payload,
      created_at: now.toISOString(),
      next_attempt_at: now.getTime(),
    });
  }

  /**
   * Queues the events of jobs that finished from `since` to `until` with a webhook URL and have
   * none: the enqueue after the job finished failed (the database was away) or its process died
   * between the two. At most `limit` jobs. Racing finished() for the same job is harmless: the
   * event is one row per job (job_id is unique), inserted by whichever comes first. One job that
   * cannot be queued is reported to onError and the others still are; a failure to look them up
   * throws.
   */
  async enqueueMissed(since: Date, until: Date, limit: number): Promise<{ found: number; queued: number }> {
    const ids = await this.#store.webhookDeliveries.unqueued(since.toISOString(), until.toISOString(), limit);
    let queued = 0;
    for (const id of ids) {
      try {
        const row = await this.#store.jobs.find(id);
        // A job purged since it was found has nothing to tell.
        if (row && (await this.enqueue(await this.#viewOf(row), row.account_id))) queued++;
      } catch (err) {
        this.#onError(err);
      }
    }
    if (queued > 0) this.onQueued?.();
    return { found: ids.length, queued };
  }

  async redeliver(job: JobView, accountId: number): Promise<void> {
    if (job.webhook_url === null) throw new ConflictError('the job has no webhook_url: there is no event to send');
    if (eventTypeOf(job) === null) throw new ConflictError(`the job is ${job.status}; its event can be sent again once it has finished`);
    const again = await this.#store.webhookDeliveries.redeliver(job.id, this.#clock().getTime());
    if (again || (await this.enqueue(job, accountId))) this.onQueued?.();
  }

  async attemptsOf(jobId: string): Promise<WebhookAttemptView[]> {
    return this.#store.webhookDeliveries.attempts(jobId);
  }

  /**
   * One attempt of a delivery `leaseHolder` has claimed: signed now, sent, recorded with what
   * follows. Returns false when it was aborted before an answer (the claim should be released,
   * nothing is recorded) or the lease was lost.
   */
  async attempt(delivery: ClaimedWebhookDelivery, leaseHolder: string, signal?: AbortSignal): Promise<boolean> {
    const started = this.#clock().getTime();
    const secret = await this.#secrets.get(delivery.account_id);
    const timestamp = Math.floor(started / 1000);
    const headers = signedHeaders(this.#secrets.signingSecrets(secret, started), delivery.webhook_id, timestamp, delivery.payload);
    const response = await this.#transport.send({
      url: delivery.url,
      headers: { ...headers },
      body: delivery.payload,
      timeoutMs: this.timeoutMs,
      owner: `acct:${delivery.account_id}`,
      ...(signal ? { signal } : {}),
    });
    if (signal?.aborted && response.status === null) return false;
    const ended = this.#clock().getTime();
    const next = this.next(delivery.attempt, response, ended);
    const recorded = await this.#store.webhookDeliveries.complete(
      delivery.id,
      leaseHolder,
      { attempt: delivery.attempt, at: new Date(started).toISOString(), status: response.status, duration_ms: response.duration_ms, error: errorText(response, next, ended) },
      next,
    );
    // Counted once, by the instance whose record stands (a lost lease records nothing).
    if (recorded) this.#metrics.webhookAttempt(next.state === 'pending' ? 'retrying' : next.state);
    return recorded;
  }

  /**
   * What follows attempt number `attempt`, answered `response` at `now` (epoch ms): delivered on
   * a 2xx; the end on a 410 or when the schedule has no more delays; otherwise the next attempt
   * after the schedule's delay for it, spread by WEBHOOK_RETRY_JITTER, and never sooner than a
   * Retry-After of a 429 or 503 (at most WEBHOOK_RETRY_AFTER_MAX_MS).
   */
  next(attempt: number, response: Pick<WebhookResponse, 'status' | 'retry_after'>, now: number): WebhookAttemptOutcome {
    const { status } = response;
    if (status !== null && status >= 200 && status < 300) return { state: 'delivered' };
    if (status === WEBHOOK_GONE_STATUS) return { state: 'failed' };
    const delay = this.retryDelaysMs[attempt - 1];
    if (delay === undefined) return { state: 'failed' };
    const spread = delay * WEBHOOK_RETRY_JITTER * (2 * this.#random() - 1);
    const scheduled = Math.round(now + delay + spread);
    const asked = retryAfterOf(response, now);
    return { state: 'pending', next_attempt_at: asked === null ? scheduled : Math.max(scheduled, now + asked) };
  }
}

/** The wait (ms) a 429's or 503's Retry-After asks from `now`, capped; null when none is honoured. */
function retryAfterOf(response: Pick<WebhookResponse, 'status' | 'retry_after'>, now: number): number | null {
  if (response.status === null || !WEBHOOK_RETRY_AFTER_STATUSES.has(response.status) || !response.retry_after) return null;
  return retryAfterMs(response.retry_after, now, WEBHOOK_RETRY_AFTER_MAX_MS);
}

/** The attempt's recorded error: the transport's, and when a Retry-After holds the next attempt back, until when. */
function errorText(response: WebhookResponse, next: WebhookAttemptOutcome, now: number): string | null {
  const asked = next.state === 'pending' ? retryAfterOf(response, now) : null;
  if (response.error === null || asked === null || asked === 0) return response.error;
  return `${response.error}, Retry-After ${Math.ceil(asked / 1_000)} s${asked === WEBHOOK_RETRY_AFTER_MAX_MS ? ' (the most honoured)' : ''}`;
}
