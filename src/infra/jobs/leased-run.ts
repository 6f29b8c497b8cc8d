import { randomBytes } from 'node:crypto';
import { hostname } from 'node:os';
import type { ClaimCandidate, JobRecord, JobRepository } from '../../domain/jobs/repository.js';
import { JOB_LEASE_MS, JOB_LEASE_RENEW_MS, type JobRunner } from '../../domain/jobs/queue.js';

/** Why a run was aborted: the process is closing (its job goes back to the queue). */
export class QueueClosingError extends Error {
  constructor() {
    super('the server is shutting down; the job will run again');
    this.name = 'QueueClosingError';
  }
}

/** Why a run was aborted: its lease was lost (cancelled or taken over elsewhere). */
export class LeaseLostError extends Error {
  constructor() {
    super('the job is no longer held by this process');
    this.name = 'LeaseLostError';
  }
}

/** A job running in this process: how to stop it, and when it has stopped. */
export interface LeasedRun {
  abort: AbortController;
  done: Promise<void>;
}

/**
 * The runs of one queue in this process, the way every queue does them: a job is claimed in the
 * database with a lease under this process's owner name, and each claimed job runs with its lease
 * renewed every `renewMs` (a renewal that finds the job no longer ours, cancelled or taken over,
 * aborts the run), its account's slot released at the end, and, when the queue is closing, the
 * job given back to the database so another process takes it at once.
 */
export class LeasedRuns {
  readonly owner: string;
  readonly #repo: JobRepository;
  readonly #leaseMs: number;
  readonly #renewMs: number;
  readonly #cancelReason: () => Error;
  readonly #onError: (err: unknown) => void;
  readonly #running = new Map<string, LeasedRun>();
  #closing = false;

  constructor(o: {
    repo: JobRepository;
    onError: (err: unknown) => void;
    leaseMs?: number | undefined;
    renewMs?: number | undefined;
    /** This process's name in leases; unique per process by default. */
    owner?: string | undefined;
    /** The reason a cancelled run is aborted with. */
    cancelReason?: (() => Error) | undefined;
  }) {
    this.#repo = o.repo;
    this.#onError = o.onError;
    this.#leaseMs = o.leaseMs ?? JOB_LEASE_MS;
    this.#renewMs = o.renewMs ?? JOB_LEASE_RENEW_MS;
    this.owner = o.owner ?? `${hostname()}:${process.pid}:${randomBytes(6).toString('hex')}`;
    this.#cancelReason = o.cancelReason ?? (() => new Error('the job was cancelled'));
  }

  /** Runs in this process now. */
  get size(): number {
    return this.#running.size;
  }

  has(id: string): boolean {
    return this.#running.has(id);
  }

  /** Claims the job for this process now; undefined when another claimer was first or it is no longer claimable. */
  claim(id: string): Promise<JobRecord | undefined> {
    const now = Date.now();
    return this.#repo.claim(id, this.owner, now, now + this.#leaseMs, new Date(now).toISOString());
  }

  /**
   * Admits a candidate (one of its account's work-in-flight slots) and claims it for this process:
   * the job with its slot's release; null when its account is at its limit; undefined when
   * another claimer was first (or it is no longer claimable).
   */
  async take(c: ClaimCandidate, runner: JobRunner): Promise<{ job: JobRecord; release: () => void } | null | undefined> {
    if (this.#closing) return undefined;
    const release = await runner.admit(c);
    if (release === null) return null;
    let job: JobRecord | undefined;
    try {
      job = await this.claim(c.id);
    } catch (err) {
      release();
      throw err;
    }
    // Closed while claiming: a run started now would outlive the close (its sockets keep the process up).
    if (job && this.#closing) {
      await this.#repo.release(job.id, this.owner).catch((err: unknown) => this.#onError(err));
      job = undefined;
    }
    if (!job) release();
    return job && { job, release };
  }

  /** Runs a claimed job; `after` is called once it is over and no longer counted. */
  start(job: JobRecord, runner: JobRunner, release: () => void, after?: () => void): LeasedRun {
    const abort = new AbortController();
    const renew = setInterval(() => {
      this.#repo.renew(job.id, this.owner, Date.now() + this.#leaseMs).then(
        (held) => {
          if (!held && !abort.signal.aborted) abort.abort(new LeaseLostError());
        },
        (err: unknown) => this.#onError(err),
      );
    }, this.#renewMs);
    renew.unref();
    const done = (async () => {
      try {
        await runner.run(job, this.owner, abort.signal);
      } catch (err) {
        this.#onError(err);
      } finally {
        clearInterval(renew);
        release();
        if (abort.signal.reason instanceof QueueClosingError) {
          await this.#repo.release(job.id, this.owner).catch((err: unknown) => this.#onError(err));
        }
        this.#running.delete(job.id);
        after?.();
      }
    })();
    const run = { abort, done };
    this.#running.set(job.id, run);
    return run;
  }

  /** The job was cancelled: its run here, if any, stops at once (its sockets close). */
  cancel(id: string): void {
    this.#running.get(id)?.abort.abort(this.#cancelReason());
  }

  /** Aborts every run as the queue closes (their jobs are given back) and waits for them to end. */
  async close(): Promise<void> {
    this.#closing = true;
    const runs = [...this.#running.values()];
    for (const r of runs) r.abort.abort(new QueueClosingError());
    await Promise.allSettled(runs.map((r) => r.done));
  }
}
