import type { ClaimCandidate, JobRecord, JobRepository } from '../../domain/jobs/repository.js';
import { LeasedQueue, takeInTurn, type Chore, type LeasedRun } from '../queue/index.js';
import { JOB_LEASE_MS, JOB_LEASE_RENEW_MS, type JobRunner } from '../../domain/jobs/queue.js';

export type { LeasedRun } from '../queue/index.js';

/** A job this process has claimed, with the release of its account's work-in-flight slot. */
export interface TakenJob {
  job: JobRecord;
  release: () => void;
}

export interface JobLeasesOptions {
  repo: JobRepository;
  onError: (err: unknown) => void;
  /** Jobs run at once by the claim loop. */
  workers: number;
  /** The claim loop: candidates read per look (the embedded queue); none when the jobs come from elsewhere (BullMQ). */
  claimLimit?: number | undefined;
  /** How often the queue looks (claims with claimLimit, and its chores) without being kicked. */
  pollMs: number;
  chores?: readonly Chore[];
  leaseMs?: number | undefined;
  renewMs?: number | undefined;
  /** This process's name in leases; unique per process by default. */
  owner?: string | undefined;
  /** The reason a cancelled run is aborted with. */
  cancelReason?: (() => Error) | undefined;
}

/**
 * The job queues' leased queue (embedded and BullMQ alike): a job is claimed in the database
 * (JobRepository.claim) once its account has a work-in-flight slot for it (JobRunner.admit),
 * with a lease renewed every `renewMs` while it runs (JOB_LEASE_MS, JOB_LEASE_RENEW_MS); the
 * slot is released when its run is over, and a job whose run the closing queue aborted is given
 * back to the database (JobRepository.release).
 */
export class JobLeases {
  readonly queue: LeasedQueue<TakenJob>;
  readonly #repo: JobRepository;
  readonly #leaseMs: number;
  readonly #cancelReason: () => Error;
  #runner: JobRunner | undefined;

  constructor(o: JobLeasesOptions) {
    this.#repo = o.repo;
    this.#leaseMs = o.leaseMs ?? JOB_LEASE_MS;
    this.#cancelReason = o.cancelReason ?? (() => new Error('the job was cancelled'));
    const repo = o.repo;
    const claimLimit = o.claimLimit;
    this.queue = new LeasedQueue<TakenJob>({
      work: {
        idOf: (t) => t.job.id,
        ...(claimLimit !== undefined ? { claim: (_owner, room, launch) => this.takeInTurn(claimLimit, () => room() > 0, launch) } : {}),
        run: (t, owner, signal) => this.#runner!.run(t.job, owner, signal),
        renew: (t, owner) => repo.renew(t.job.id, owner, Date.now() + this.#leaseMs),
        ended: (t) => t.release(),
        giveBack: (t, owner) => repo.release(t.job.id, owner),
      },
      concurrency: o.workers,
      pollMs: o.pollMs,
      renewMs: o.renewMs ?? JOB_LEASE_RENEW_MS,
      owner: o.owner,
      ...(o.chores ? { chores: o.chores } : {}),
      onError: o.onError,
    });
  }

  get owner(): string {
    return this.queue.owner;
  }

  /** Jobs running in this process now. */
  get size(): number {
    return this.queue.size;
  }

  has(id: string): boolean {
    return this.queue.has(id);
  }

  /** Gives the queue its runner (the job service); `poll` starts its look loop too. */
  start(runner: JobRunner, poll: boolean): void {
    this.#runner = runner;
    if (poll) this.queue.start();
  }

  /**
   * Reads up to `limit` claimable jobs and takes them in turn (takeInTurn: round-robin between
   * accounts, an account at its limit passed over) while `room()` and the queue is open, each one
   * claimed going to `taken` (to be run with `queue.run`). True when jobs were left behind.
   */
  async takeInTurn(limit: number, room: () => boolean, taken: (t: TakenJob) => void): Promise<boolean> {
    const candidates = await this.#repo.claimable(Date.now(), limit);
    return takeInTurn(candidates, { room: () => !this.queue.closing && room(), skip: (c) => this.queue.has(c.id), take: (c) => this.#take(c), taken });
  }

  /** Admits a candidate (one of its account's slots) and claims it: null when its account is at its limit; undefined when another claimer was first. */
  async #take(c: ClaimCandidate): Promise<TakenJob | null | undefined> {
    const release = await this.#runner!.admit(c);
    if (release === null) return null;
    let job: JobRecord | undefined;
    try {
      const now = Date.now();
      job = await this.#repo.claim(c.id, this.owner, now, now + this.#leaseMs, new Date(now).toISOString());
    } catch (err) {
      release();
      throw err;
    }
    if (!job) release();
    return job && { job, release };
  }

  /** Runs a claimed job with its lease renewed. */
  run(t: TakenJob): LeasedRun {
    return this.queue.run(t);
  }

  /** The job was cancelled: its run here, if any, stops at once (its sockets close). */
  cancel(id: string): void {
    this.queue.cancel(id, this.#cancelReason());
  }

  /** Aborts every run as the queue closes (their jobs are given back) and waits for them to end. */
  close(): Promise<void> {
    return this.queue.close();
  }
}
