import type { JobStatus } from './types.js';

/**
 * Jobs in the database (docs/jobs.md): the same SQL on SQLite and PostgreSQL.
 * A job is run by whoever claims it: the claim is a compare-and-set (UPDATE … WHERE id = ? AND
 * it is still queued, or running on a lapsed lease), so of any number of processes exactly one
 * sees a row changed. Every later write of the run is conditional on its lease, so a claimer
 * that lost its lease (it stalled, another took the job over) changes nothing.
 */

/** A job row, JSON columns as text. */
export interface JobRecord {
  id: string;
  account_id: number;
  endpoint: string;
  status: JobStatus;
  body: string;
  webhook_url: string | null;
  progress_done: number;
  progress_total: number;
  created_at: string;
  started_at: string | null;
  finished_at: string | null;
  result: string | null;
  error: string | null;
  /** The process running it, and until when (epoch ms) its claim holds unless renewed. */
  lease_owner: string | null;
  lease_until: number | null;
  attempts: number;
}

export interface NewJob {
  id: string;
  account_id: number;
  endpoint: string;
  body: string;
  webhook_url: string | null;
  progress_total: number;
  created_at: string;
}

/**
 * Items that completed together, written as one row: consecutive sequence numbers
 * first_seq..last_seq, as the NDJSON lines a stream sends (src/domain/jobs/items.ts).
 */
export interface JobItemBatch {
  first_seq: number;
  last_seq: number;
  lines: string;
}

/** A job that may be claimed, with its account's plan (for its work-in-flight limit). */
export interface ClaimCandidate {
  id: string;
  account_id: number;
  plan: string;
}

/** Claimable jobs one account contributes to a look: above any plan's jobs in flight (16). */
export const JOB_CLAIMABLE_PER_ACCOUNT = 32;

export interface JobOutcome {
  status: 'succeeded' | 'failed';
  result: string | null;
  error: string | null;
  finished_at: string;
  progress_done: number;
  /** Set when the total known at the start was a bound (JobOperation.itemsAtMost): what there turned out to be. */
  progress_total?: number;
}

export interface JobRepository {
  create(job: NewJob): Promise<JobRecord>;
  find(id: string): Promise<JobRecord | undefined>;
  /** The account's jobs, newest first (created_at, then id), strictly before `before` when given. */
  list(accountId: number, opts: { status?: JobStatus | undefined; before?: { created_at: string; id: string } | undefined; limit: number }): Promise<JobRecord[]>;
  /** The batches holding items with seq > afterSeq, in seq order, at most `limit` batches. */
  itemBatches(jobId: string, afterSeq: number, limit: number): Promise<JobItemBatch[]>;
  /**
   * Queued jobs and running ones whose lease lapsed before `now` (epoch ms) of active accounts,
   * round-robin between accounts (docs/api.md, "Rate limits"): an account's n-th waiting job comes after
   * every other account's (n - jobs it has running)-th, so one with jobs running goes after one
   * with none; between equals, the account that had a job started longest ago (or never) first;
   * then oldest first. At most `perAccount` of one account (default JOB_CLAIMABLE_PER_ACCOUNT),
   * `limit` in all.
   */
  claimable(now: number, limit: number, perAccount?: number): Promise<ClaimCandidate[]>;
  /**
   * Takes the job for `holder` until `leaseUntil` when it is still claimable at `now` and its
   * account is active. Its items of an earlier run are kept (the run goes on from them), and so
   * are its progress and its first `started_at` (`startedAt` is set only on a first claim).
   * Undefined when another claimer was first (or the account is suspended).
   */
  claim(id: string, holder: string, now: number, leaseUntil: number, startedAt: string): Promise<JobRecord | undefined>;
  /** Extends the lease; false when `holder` no longer holds the running job (cancelled, taken over). */
  renew(id: string, holder: string, leaseUntil: number): Promise<boolean>;
  /** Adds a batch of items and sets progress, while `holder` holds the running job; false otherwise. */
  addItems(id: string, holder: string, batch: JobItemBatch, done: number): Promise<boolean>;
  /**
   * Records the outcome, with the run's last items when given (one transaction), while `holder`
   * holds the running job; false otherwise (nothing written).
   */
  finish(id: string, holder: string, outcome: JobOutcome, items?: JobItemBatch | null): Promise<boolean>;
  /** Gives a running job back to the queue (its process is shutting down). */
  release(id: string, holder: string): Promise<boolean>;
  /**
   * Gives the run's turn back while another account's job waits (JOB_SLICE_MS): the job stays
   * `running`, with its progress and items, but its lease is over, so it is claimable at once
   * (behind the waiting accounts in the round-robin). False when `holder` no longer holds it.
   */
  yieldTurn(id: string, holder: string): Promise<boolean>;
  /** Jobs running on a live lease at `now` (epoch ms), per account of `accountIds` (accounts with none are absent). */
  runningCounts(now: number, accountIds: readonly number[]): Promise<Map<number, number>>;
  /** Cancels the account's job while it is queued or running: true for exactly one caller. */
  cancel(id: string, accountId: number, at: string): Promise<boolean>;
  /**
   * Cancels every queued and running job of the account (it was suspended), with `error` (JSON)
   * as their error: the ids of the jobs cancelled. Their runs lose their leases.
   */
  cancelAccount(accountId: number, at: string, error: string): Promise<string[]>;
  /** Deletes jobs (and their items) created before `before` (ISO); returns how many. */
  purge(before: string): Promise<number>;
  /**
   * How many jobs are in each status, every status named (0 when none), each count stopping at
   * `cap`: a range of the (status, created_at) index per status, at most `cap` entries each, so
   * a scrape of GET /metrics costs the same with a million jobs kept as with ten thousand.
   */
  countByStatus(cap: number): Promise<Record<JobStatus, number>>;
}
