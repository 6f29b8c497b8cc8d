import type { JobRepository } from '../../domain/jobs/repository.js';
import type { JobQueue, JobRunner } from '../../domain/jobs/queue.js';
import { LeasedRuns } from './leased-run.js';

/** How often the database is asked for jobs nobody told this process about (other instances, lapsed leases, freed slots). */
export const EMBEDDED_POLL_MS = 1_000;
/** Candidates read per look: more than the workers, so one account at its limit does not hide the others' jobs. */
export const EMBEDDED_CANDIDATES = 200;

export { LeaseLostError, QueueClosingError } from './leased-run.js';

export interface EmbeddedQueueOptions {
  /** Jobs run at once; 0 = accept only. */
  workers: number;
  leaseMs?: number;
  renewMs?: number;
  pollMs?: number;
  /** This process's name in leases; unique per process by default. */
  owner?: string;
  onError?: (err: unknown) => void;
  /** Reasons a run was aborted with, passed to `onAbort` (tests): cancel reasons come from the caller. */
  cancelReason?: () => Error;
}

/**
 * Jobs in the database, run in the process that accepted them (and in any other sharing the
 * database): NETDIAG_WORKERS at a time, each claimed with a lease it renews, so jobs of a process
 * that died are run again by the next one to look.
 */
export class EmbeddedJobQueue implements JobQueue {
  readonly #repo: JobRepository;
  readonly #workers: number;
  readonly #pollMs: number;
  readonly #onError: (err: unknown) => void;
  readonly #runs: LeasedRuns;
  #runner: JobRunner | undefined;
  #timer: NodeJS.Timeout | undefined;
  #pumping = false;
  #again = false;
  /** The last look left claimable jobs behind (workers busy, an account at its limit, or none made yet). */
  #backlog = true;
  #closed = false;

  constructor(repo: JobRepository, opts: EmbeddedQueueOptions) {
    if (!Number.isInteger(opts.workers) || opts.workers < 0) throw new RangeError('EmbeddedJobQueue: workers must be a whole number, 0 or more');
    this.#repo = repo;
    this.#workers = opts.workers;
    this.#pollMs = opts.pollMs ?? EMBEDDED_POLL_MS;
    this.#onError = opts.onError ?? (() => undefined);
    this.#runs = new LeasedRuns({ repo, onError: this.#onError, leaseMs: opts.leaseMs, renewMs: opts.renewMs, owner: opts.owner, cancelReason: opts.cancelReason });
  }

  get owner(): string {
    return this.#runs.owner;
  }

  /** Jobs running in this process now. */
  get active(): number {
    return this.#runs.size;
  }

  async enqueue(_id: string, answered?: Promise<unknown>): Promise<void> {
    // Not at once: the run's first turn (a scan opens hundreds of sockets in it) comes after the
    // creating request's 202 has been written, not before; without word of it, on a timer.
    const kick = (): void => this.#kick();
    if (answered) void answered.then(kick, kick);
    else setTimeout(kick, 0);
  }

  start(runner: JobRunner): void {
    this.#runner = runner;
    if (this.#workers === 0 || this.#closed) return;
    this.#timer = setInterval(() => this.#kick(), this.#pollMs);
    this.#timer.unref();
    this.#kick();
  }

  async cancel(id: string): Promise<void> {
    this.#runs.cancel(id);
  }

  async close(): Promise<void> {
    this.#closed = true;
    clearInterval(this.#timer);
    await this.#runs.close();
  }

  #kick(): void {
    if (!this.#runner || this.#closed || this.#workers === 0) return;
    void this.#pump();
  }

  async #pump(): Promise<void> {
    if (this.#pumping) {
      this.#again = true;
      return;
    }
    this.#pumping = true;
    try {
      do {
        this.#again = false;
        if (this.#closed || this.#runs.size >= this.#workers) {
          // No look made: whatever asked for this one waits for a worker.
          this.#backlog = true;
          break;
        }
        const candidates = await this.#repo.claimable(Date.now(), EMBEDDED_CANDIDATES);
        this.#backlog = false;
        // Accounts found at their work-in-flight limit in this look: their later jobs are not asked about.
        const full = new Set<number>();
        for (const c of candidates) {
          if (this.#closed || this.#runs.size >= this.#workers) {
            this.#backlog = true;
            break;
          }
          if (this.#runs.has(c.id)) continue;
          if (full.has(c.account_id)) {
            this.#backlog = true;
            continue;
          }
          // In the order of the look: round-robin between accounts (JobRepository.claimable).
          const taken = await this.#runs.take(c, this.#runner!);
          if (taken === null) {
            full.add(c.account_id);
            this.#backlog = true;
          }
          if (taken) this.#launch(taken.job, taken.release);
        }
      } while (this.#again);
    } catch (err) {
      this.#backlog = true;
      this.#onError(err);
    } finally {
      this.#pumping = false;
    }
  }

  #launch(job: Parameters<JobRunner['run']>[0], release: () => void): void {
    // A worker (and the account's slot) is free again: another look, when the last one left jobs
    // behind. New jobs kick a look of their own, and the poll finds other processes' jobs.
    this.#runs.start(job, this.#runner!, release, () => {
      if (this.#backlog) this.#kick();
    });
  }
}
