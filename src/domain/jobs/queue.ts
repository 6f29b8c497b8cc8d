import type { ClaimCandidate, JobRecord } from './repository.js';

/**
 * The job engine's one interface (STYLE.md: embedded by default, BullMQ with REDIS_URL). Job
 * state lives in the database either way; a queue only decides who runs which job when. An
 * implementation claims a job in the database (JobRepository.claim, a lease it renews) before it
 * runs it, so a job is run by one process at a time, and a job whose process died is run again.
 */

/** What runs jobs: the job service. */
export interface JobRunner {
  /**
   * Asked before a job is claimed: a release for one of its account's work-in-flight slots, or
   * null while the account is at its limit (the job then waits, queued).
   */
  admit(candidate: ClaimCandidate): Promise<(() => void) | null>;
  /**
   * Runs a claimed job to its end. `signal` aborts when it is cancelled, its lease is lost or the
   * process shuts down; the run then writes nothing more.
   */
  run(job: JobRecord, holder: string, signal: AbortSignal): Promise<void>;
  /**
   * The job's run goes on from its stored items when run again (a bulk or range call), so it may
   * give its turn back between batches while another account's job waits (JOB_SLICE_MS). A call
   * with one answer would start over: it keeps its turn to its end.
   */
  resumable?(job: JobRecord): boolean;
}

export interface JobQueue {
  /**
   * A job was created (its row is committed): run it when a worker is free. `answered` settles
   * once the creating request's answer is out: a queue that runs the job in this process starts
   * it no sooner (a scan's first burst of sockets would hold the 202 back).
   */
  enqueue(id: string, answered?: Promise<unknown>): Promise<void>;
  /** Starts taking jobs (none with 0 workers: this process accepts jobs only). */
  start(runner: JobRunner): void;
  /** The job was cancelled in the database: stop its run if one is in this process (its sockets close at once). */
  cancel(id: string): Promise<void>;
  /** Stops taking jobs; runs in flight are aborted and their jobs given back to the queue. */
  close(): Promise<void>;
}

/** How long a claim holds without renewal: a job of a process that died is taken over after it. */
export const JOB_LEASE_MS = 30_000;
/** A running job renews its lease this often (cancellation by another process is seen within it). */
export const JOB_LEASE_RENEW_MS = 5_000;
/**
 * A running job's turn: every this often a process whose workers are all busy looks for another
 * account's job waiting for a slot (in the database, so across instances), and a resumable job
 * that has run at least this long in its turn, of an account holding more than its share, gives
 * its turn back (JobRepository.yieldTurn) so the waiting one starts (docs/jobs.md: within 2 s).
 */
export const JOB_SLICE_MS = 1_000;
