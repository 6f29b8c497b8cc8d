/**
 * Webhook deliveries in the database: the queue every instance sharing it works from. A
 * delivery is claimed with a lease (a compare-and-set on the row, the same SQL on SQLite and
 * PostgreSQL), so two instances never send the same attempt, and a delivery whose instance died
 * is taken by another once the lease lapses.
 */

/** 'dropped': never sent, its account was suspended (docs/jobs.md). */
export type WebhookDeliveryState = 'pending' | 'delivered' | 'failed' | 'dropped';

export interface NewWebhookDelivery {
  webhook_id: string;
  job_id: string;
  account_id: number;
  url: string;
  event_type: string;
  /** The request body, fixed once: every retry sends the same bytes. */
  payload: string;
  created_at: string;
  /** Epoch ms. */
  next_attempt_at: number;
}

/** A delivery an instance holds the lease of, with the number its next attempt gets. */
export type ClaimedWebhookDelivery = Omit<NewWebhookDelivery, 'created_at' | 'next_attempt_at'> & { id: number; attempt: number };

export interface WebhookAttemptRecord {
  attempt: number;
  at: string;
  status: number | null;
  duration_ms: number;
  error: string | null;
}

/** What follows an attempt: another one at `next_attempt_at`, or the end. */
export type WebhookAttemptOutcome = { state: 'pending'; next_attempt_at: number } | { state: 'delivered' | 'failed' };

export interface WebhookDeliveryRepository {
  /** Queues a job's event; false (and nothing changes) when the job already has one. */
  enqueue(delivery: NewWebhookDelivery): Promise<boolean>;
  /**
   * Takes up to `limit` due deliveries of active accounts whose lease is free or lapsed, leased
   * to `holder` until now + leaseMs; of one account, only as many as keep its live leases (every
   * instance's) at `perAccount` (default: no cap beyond `limit`), so one account's backlog cannot
   * hold every slot. Round-robin between accounts: an account's n-th due delivery comes after
   * every other account's (n - leases it holds)-th; between equals, the account that had one
   * taken longest ago (or never) first; then the one due first.
   */
  claim(holder: string, now: number, leaseMs: number, limit: number, perAccount?: number): Promise<ClaimedWebhookDelivery[]>;
  /**
   * Records the attempt and what follows, and frees the lease, in one transaction; false (and
   * nothing recorded) when `holder` no longer holds the delivery.
   */
  complete(id: number, holder: string, record: WebhookAttemptRecord, next: WebhookAttemptOutcome): Promise<boolean>;
  /**
   * The account was suspended: its pending deliveries are dropped (an attempt under way records
   * nothing), and the jobs the suspension cancelled (at `cancelledAt`, with `error` as their error)
   * get no event (a dropped one stands in for it, so the sweep for lost events never queues one); a
   * job its owner cancelled in the same millisecond keeps its event. Returns how many pending ones
   * were dropped.
   */
  dropAccount(accountId: number, cancelledAt: string, error: string): Promise<number>;
  /**
   * The account asked for a job's event again (POST /api/jobs/{id}/deliveries): its delivery,
   * whatever its state, is pending and due at `now`, under the same webhook_id; an attempt under
   * way is left to finish (it is being sent now). false when the job has no delivery row.
   */
  redeliver(jobId: string, now: number): Promise<boolean>;
  /** Gives a claim back unattempted (shutting down): the delivery is due again at once. */
  release(id: number, holder: string): Promise<void>;
  /** A job's attempts, in order. */
  attempts(jobId: string): Promise<WebhookAttemptRecord[]>;
  /** Forgets finished deliveries (and their attempts) created before `before` (ISO); returns how many. */
  purge(before: string): Promise<number>;
  /**
   * Finished jobs with a webhook URL, finished from `since` to `until` (ISO), that have no
   * delivery: events whose enqueue was lost. Ids, oldest first, at most `limit`.
   */
  unqueued(since: string, until: string, limit: number): Promise<string[]>;
}

export interface WebhookSecret {
  account_id: number;
  secret: string;
  created_at: string;
  /** The secret before the last rotation, which still signs until previous_until. */
  previous_secret: string | null;
  previous_until: string | null;
  /** The secret before that one, while it still signs (until older_until); absent when there is none. */
  older_secret?: string | null;
  older_until?: string | null;
}

export interface WebhookSecretRepository {
  /** The account's secret; `candidate` becomes it when it has none yet (the first writer wins). */
  get(accountId: number, candidate: { secret: string; created_at: string }): Promise<WebhookSecret>;
  /** Replaces the secret; the current one goes on signing until `previousUntil` (and nothing older does). */
  rotate(accountId: number, next: { secret: string; created_at: string }, previousUntil: string): Promise<WebhookSecret>;
  /**
   * The same, only while the current secret is still `opts.expected` (compare-and-set: null when
   * another rotation got there first); `opts.older` is kept signing beside the previous one.
   */
  rotate(
    accountId: number,
    next: { secret: string; created_at: string },
    previousUntil: string,
    opts: { expected: string; older: { secret: string; until: string } | null },
  ): Promise<WebhookSecret | null>;
}
