import type { JobRepository } from '../../domain/jobs/repository.js';
import type { JobQueue, JobRunner } from '../../domain/jobs/queue.js';
import { JobLeases } from './job-leases.js';

/** How often the database is asked for jobs nobody told this process about (other instances, lapsed leases, freed slots). */
export const EMBEDDED_POLL_MS = 1_000;
/** Candidates read per look: more than the workers, so one account at its limit does not hide the others' jobs. */
export const EMBEDDED_CANDIDATES = 200;


export interface EmbeddedQueueOptions {
  /** Jobs run at once; 0 = accept only. */
  workers: number;
  leaseMs?: number;
  renewMs?: number;
  pollMs?: number;
  /** This process's name in leases; unique per process by default. */
  holder?: string;
  onError?: (err: unknown) => void;
  /** Reasons a run was aborted with, passed to `onAbort` (tests): cancel reasons come from the caller. */
  cancelReason?: () => Error;
  /** How often turns are checked (JobLeases.checkTurns), and the least a run keeps its turn: JOB_SLICE_MS unless given. */
  sliceMs?: number;
}

/**
 * Jobs in the database, run in the process that accepted them (and in any other sharing the
 * database): NETDIAG_WORKERS at a time, each claimed with a lease it renews, so jobs of a process
 * that died are run again by the next one to look. The leased queue's claim loop (infra/queue)
 * looks when a job is created, when a run ends and the last look left jobs behind (workers busy,
 * an account at its limit), and every EMBEDDED_POLL_MS; each look takes the claimable jobs in
 * turn between accounts.
 */
export class EmbeddedJobQueue implements JobQueue {
  readonly #workers: number;
  readonly #leases: JobLeases;
  #started = false;

  constructor(repo: JobRepository, opts: EmbeddedQueueOptions) {
    if (!Number.isInteger(opts.workers) || opts.workers < 0) throw new RangeError('EmbeddedJobQueue: workers must be a whole number, 0 or more');
    this.#workers = opts.workers;
    this.#leases = new JobLeases({
      repo,
      onError: opts.onError ?? (() => undefined),
      workers: opts.workers,
      claimLimit: EMBEDDED_CANDIDATES,
      pollMs: opts.pollMs ?? EMBEDDED_POLL_MS,
      leaseMs: opts.leaseMs,
      renewMs: opts.renewMs,
      holder: opts.holder,
      cancelReason: opts.cancelReason,
      sliceMs: opts.sliceMs,
    });
  }

  get holder(): string {
    return this.#leases.holder;
  }

  /** Jobs running in this process now. */
  get active(): number {
    return this.#leases.size;
  }

  async enqueue(_id: string, answered?: Promise<unknown>): Promise<void> {
    // Not at once: the run's start (a scan opens hundreds of sockets at once) comes after the
    // creating request's 202 has been written, not before; without word of it, on a timer.
    // With every worker busy, a job of an account holding more than its share gives its turn
    // to this one (if it is another account's) now rather than at the next check.
    const kick = (): void => {
      this.#leases.queue.kick();
      void this.#leases.checkTurns();
    };
    if (answered) void answered.then(kick, kick);
    else setTimeout(kick, 0);
  }

  start(runner: JobRunner): void {
    if (this.#started) return;
    this.#started = true;
    // 0 workers: jobs are accepted here and run elsewhere; no look is ever made.
    this.#leases.start(runner, this.#workers > 0);
  }

  async cancel(id: string): Promise<void> {
    this.#leases.cancel(id);
  }

  /** Gives a turn to another account's waiting job if the shares call for it (JobLeases.checkTurns): the id of the job that gave its turn. */
  checkTurns(): Promise<string | undefined> {
    return this.#leases.checkTurns();
  }

  async close(): Promise<void> {
    await this.#leases.close();
  }
}
