import { randomBytes } from 'node:crypto';
import { hostname } from 'node:os';
import type { JobRepository } from '../store/jobs.js';
import { JOB_LEASE_MS, JOB_LEASE_RENEW_MS, type JobQueue, type JobRunner } from './queue.js';
import { QueueClosingError, startLeasedRun, type LeasedRun } from './leased-run.js';

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
  readonly #leaseMs: number;
  readonly #renewMs: number;
  readonly #pollMs: number;
  readonly #owner: string;
  readonly #onError: (err: unknown) => void;
  readonly #cancelReason: () => Error;
  readonly #running = new Map<string, LeasedRun>();
  #runner: JobRunner | undefined;
  #timer: NodeJS.Timeout | undefined;
  #pumping = false;
  #again = false;
  #closed = false;

  constructor(repo: JobRepository, opts: EmbeddedQueueOptions) {
    if (!Number.isInteger(opts.workers) || opts.workers < 0) throw new RangeError('EmbeddedJobQueue: workers must be a whole number, 0 or more');
    this.#repo = repo;
    this.#workers = opts.workers;
    this.#leaseMs = opts.leaseMs ?? JOB_LEASE_MS;
    this.#renewMs = opts.renewMs ?? JOB_LEASE_RENEW_MS;
    this.#pollMs = opts.pollMs ?? EMBEDDED_POLL_MS;
    this.#owner = opts.owner ?? `${hostname()}:${process.pid}:${randomBytes(6).toString('hex')}`;
    this.#onError = opts.onError ?? (() => undefined);
    this.#cancelReason = opts.cancelReason ?? (() => new Error('the job was cancelled'));
  }

  get owner(): string {
    return this.#owner;
  }

  /** Jobs running in this process now. */
  get active(): number {
    return this.#running.size;
  }

  async enqueue(): Promise<void> {
    this.#kick();
  }

  start(runner: JobRunner): void {
    this.#runner = runner;
    if (this.#workers === 0 || this.#closed) return;
    this.#timer = setInterval(() => this.#kick(), this.#pollMs);
    this.#timer.unref();
    this.#kick();
  }

  async cancel(id: string): Promise<void> {
    this.#running.get(id)?.abort.abort(this.#cancelReason());
  }

  async close(): Promise<void> {
    this.#closed = true;
    clearInterval(this.#timer);
    const runs = [...this.#running.values()];
    for (const r of runs) r.abort.abort(new QueueClosingError());
    await Promise.allSettled(runs.map((r) => r.done));
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
        if (this.#closed || this.#running.size >= this.#workers) break;
        const candidates = await this.#repo.claimable(Date.now(), EMBEDDED_CANDIDATES);
        for (const c of candidates) {
          if (this.#closed || this.#running.size >= this.#workers) break;
          if (this.#running.has(c.id)) continue;
          const release = await this.#runner!.admit(c);
          if (release === null) continue;
          const now = Date.now();
          let job;
          try {
            job = await this.#repo.claim(c.id, this.#owner, now, now + this.#leaseMs, new Date(now).toISOString());
          } catch (err) {
            release();
            throw err;
          }
          if (!job) {
            release();
            continue;
          }
          this.#launch(job, release);
        }
      } while (this.#again);
    } catch (err) {
      this.#onError(err);
    } finally {
      this.#pumping = false;
    }
  }

  #launch(job: Parameters<JobRunner['run']>[0], release: () => void): void {
    startLeasedRun({
      repo: this.#repo,
      runner: this.#runner!,
      owner: this.#owner,
      leaseMs: this.#leaseMs,
      renewMs: this.#renewMs,
      job,
      release,
      running: this.#running,
      onError: this.#onError,
      after: () => this.#kick(),
    });
  }
}
