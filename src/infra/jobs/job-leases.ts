import type { ClaimCandidate, JobRecord, JobRepository } from '../../domain/jobs/repository.js';
import { LeasedQueue, takeInTurn, type Chore, type LeasedRun } from '../queue/index.js';
import { JOB_LEASE_MS, JOB_LEASE_RENEW_MS, JOB_SLICE_MS, type JobRunner } from '../../domain/jobs/queue.js';
import { TurnYieldedError } from '../../errors.js';

/** Candidates a turn check reads (JobRepository.claimable): enough to pass over accounts at their limit. */
export const JOB_TURN_CANDIDATES = 50;

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
  holder?: string | undefined;
  /** The reason a cancelled run is aborted with. */
  cancelReason?: (() => Error) | undefined;
  /** How often turns are checked, and how long a run keeps its turn at least (JOB_SLICE_MS unless given). */
  sliceMs?: number | undefined;
  now?: (() => number) | undefined;
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
  readonly #workers: number;
  readonly #sliceMs: number;
  readonly #now: () => number;
  readonly #onError: (err: unknown) => void;
  /** The jobs running here, and when each run began its turn. */
  readonly #turns = new Map<string, { job: JobRecord; since: number }>();
  #runner: JobRunner | undefined;
  #turnTimer: NodeJS.Timeout | undefined;
  #checking: Promise<string | undefined> | undefined;

  constructor(o: JobLeasesOptions) {
    this.#repo = o.repo;
    this.#workers = o.workers;
    this.#sliceMs = o.sliceMs ?? JOB_SLICE_MS;
    this.#now = o.now ?? Date.now;
    this.#onError = o.onError;
    this.#leaseMs = o.leaseMs ?? JOB_LEASE_MS;
    this.#cancelReason = o.cancelReason ?? (() => new Error('the job was cancelled'));
    const repo = o.repo;
    const claimLimit = o.claimLimit;
    this.queue = new LeasedQueue<TakenJob>({
      work: {
        idOf: (t) => t.job.id,
        ...(claimLimit !== undefined ? { claim: (_holder, room, launch) => this.takeInTurn(claimLimit, () => room() > 0, launch) } : {}),
        run: async (t, holder, signal) => {
          this.#turns.set(t.job.id, { job: t.job, since: this.#now() });
          try {
            await this.#runner!.run(t.job, holder, signal);
          } finally {
            this.#turns.delete(t.job.id);
          }
        },
        renew: (t, holder) => repo.renew(t.job.id, holder, Date.now() + this.#leaseMs),
        ended: (t) => t.release(),
        // A yielded turn: still running to the API, claimable at once; a closing queue's: queued again.
        giveBack: (t, holder, _outcome, reason) => (reason instanceof TurnYieldedError ? repo.yieldTurn(t.job.id, holder) : repo.release(t.job.id, holder)),
      },
      concurrency: o.workers,
      pollMs: o.pollMs,
      renewMs: o.renewMs ?? JOB_LEASE_RENEW_MS,
      holder: o.holder,
      ...(o.chores ? { chores: o.chores } : {}),
      onError: o.onError,
    });
  }

  get holder(): string {
    return this.queue.holder;
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
    if (this.#workers > 0 && runner.resumable && this.#turnTimer === undefined) {
      this.#turnTimer = setInterval(() => void this.checkTurns(), this.#sliceMs);
      this.#turnTimer.unref();
    }
  }

  /**
   * Fairness between accounts for jobs of any length (docs/api.md, "Rate limits"): with every worker
   * here busy, looks in the database (so across instances) for a job of another account waiting
   * for a slot, its account under its own limit (JobRunner.admit). When the waiting account runs
   * nothing, or one of the accounts running a resumable job here runs at least two more jobs
   * than it (counted in the database, across instances), a job of the account here running the
   * most (the one past its slice that has had its turn longest) gives its turn back: it stops,
   * keeps what it completed, and is claimable again at once, behind the waiting account in the
   * round-robin. One job per check, so a waiting account takes turns until the shares are even
   * (accounts with more long jobs than there are workers take turns of a slice each); nothing is
   * given back while nobody else waits.
   * Answers the id of the job that gave its turn, if one did.
   */
  checkTurns(): Promise<string | undefined> {
    this.#checking ??= this.#checkTurns()
      .catch((err: unknown) => {
        this.#onError(err);
        return undefined;
      })
      .finally(() => (this.#checking = undefined));
    return this.#checking;
  }

  async #checkTurns(): Promise<string | undefined> {
    const runner = this.#runner;
    // A free worker takes the waiting job itself (here or, with BullMQ, wherever it is free).
    if (!runner?.resumable || this.queue.closing || this.queue.size < this.#workers) return undefined;
    const now = this.#now();
    const givers = [...this.#turns.values()].filter((r) => now - r.since >= this.#sliceMs && runner.resumable!(r.job));
    if (givers.length === 0) return undefined;
    const waiting = (await this.#repo.claimable(now, JOB_TURN_CANDIDATES)).filter((c) => !this.queue.has(c.id));
    if (waiting.length === 0) return undefined;
    const running = await this.#repo.runningCounts(now, [...waiting.map((c) => c.account_id), ...givers.map((g) => g.job.account_id)]);
    const count = (accountId: number): number => running.get(accountId) ?? 0;
    // The account with the most running first, then its run that has had its turn longest.
    givers.sort((a, b) => count(b.job.account_id) - count(a.job.account_id) || a.since - b.since);
    const asked = new Set<number>();
    for (const c of waiting) {
      if (asked.has(c.account_id)) continue;
      asked.add(c.account_id);
      const giver = givers.find((g) => g.job.account_id !== c.account_id);
      // A turn goes to an account running nothing, or from one running two more than the
      // waiting one; between accounts that both run jobs and hold nearly even shares, a turn
      // taken would only swap who waits (and throw away the giver's probes in flight).
      const gives = count(c.account_id) === 0 || (giver !== undefined && count(giver.job.account_id) > count(c.account_id) + 1);
      if (!giver || !gives) continue;
      // The waiting account at its own limit would not take the turn.
      const release = await runner.admit(c);
      if (release === null) continue;
      release();
      if (!this.#turns.has(giver.job.id)) return undefined;
      this.queue.yield(giver.job.id);
      return giver.job.id;
    }
    return undefined;
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
      job = await this.#repo.claim(c.id, this.holder, now, now + this.#leaseMs, new Date(now).toISOString());
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
    clearInterval(this.#turnTimer);
    return this.queue.close();
  }
}
