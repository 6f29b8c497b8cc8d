/**
 * The jobs contract (docs/jobs.md) shared by the job engine (src/domain/jobs,
 * its queues) and webhook delivery (src/domain/webhooks): what a job looks like to a client,
 * and how the engine tells delivery that one finished. Plain TypeScript: no HTTP, no queue.
 */

export type JobStatus = 'queued' | 'running' | 'succeeded' | 'failed' | 'cancelled';
export const JOB_STATUSES: readonly JobStatus[] = ['queued', 'running', 'succeeded', 'failed', 'cancelled'];
export const FINISHED_STATUSES: ReadonlySet<JobStatus> = new Set(['succeeded', 'failed', 'cancelled']);

/** The error body the synchronous call would have answered with. */
export interface JobError {
  success: false;
  error: string;
  message: string;
  details?: Record<string, unknown>;
}

/** One delivery attempt of a job's webhook, as GET /api/jobs/{id} shows it. */
export interface WebhookAttemptView {
  attempt: number;
  at: string;
  /** The receiver's HTTP status, or null when there was none (timeout, refused, forbidden). */
  status: number | null;
  duration_ms: number;
  error: string | null;
}

/** A job as the API answers it (docs/jobs.md: `{id, endpoint, status, progress, created_at, …}`). */
export interface JobView {
  id: string;
  endpoint: string;
  status: JobStatus;
  progress: { done: number; total: number };
  created_at: string;
  started_at: string | null;
  finished_at: string | null;
  /** What the synchronous call would have put in `data` (items completed so far while running). */
  result: unknown;
  error: JobError | null;
  webhook_url: string | null;
  /** The webhook's delivery attempts, once there are any. */
  webhook_deliveries?: WebhookAttemptView[];
}

export type JobEventType = 'job.succeeded' | 'job.failed' | 'job.cancelled';

/** Told by the job engine, once per job that has a webhook URL, when it reaches a finished status. */
export interface JobEvents {
  /**
   * May return a promise that resolves once the event is durable (webhooks: the delivery is in
   * the database); an engine that awaits it before acknowledging the job loses no event to a crash.
   * It never rejects.
   */
  finished(job: JobView, accountId: number): void | Promise<void>;
}

/**
 * Webhook delivery as the job engine sees it: a URL is checked when the job is created (403
 * target_forbidden for a forbidden one, before the 202), and a job's attempts are shown with it.
 */
export interface JobWebhooks extends JobEvents {
  /** Throws ValidationError (not http/https, malformed) or TargetForbiddenError (resolved into a blocked range). */
  checkUrl(url: string): Promise<void>;
  attemptsOf(jobId: string): Promise<WebhookAttemptView[]>;
  /**
   * Sends a finished job's event again now, under the same webhook-id (a new event only when it
   * never had one). ConflictError when the job has not finished or has no webhook URL.
   */
  redeliver(job: JobView, accountId: number): Promise<void>;
}
