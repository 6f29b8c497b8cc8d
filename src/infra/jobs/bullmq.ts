import { DelayedError, Queue, Worker, type Job } from 'bullmq';
import { Redis, type RedisOptions } from 'ioredis';
import { LRUCache } from 'lru-cache';
import type { JobRepository } from '../../domain/jobs/repository.js';
import { withoutRepeats } from '../../lib/repeat-filter.js';
import { JobLeases, type TakenJob } from './job-leases.js';
import type { JobQueue, JobRunner } from '../../domain/jobs/queue.js';
import { withDeadline } from '../../lib/deadline.js';
import { QueueClosingError, TurnYieldedError } from '../../errors.js';

/** The BullMQ queue's name; its keys start with the prefix (default `netdiag:bull`). */
export const BULLMQ_QUEUE_NAME = 'netdiag-jobs';
export const BULLMQ_PREFIX = 'netdiag:bull';
/** How often every process re-enqueues what the database says is claimable (Redis was down at creation, every process died). */
export const BULLMQ_SWEEP_MS = 5_000;
/**
 * A job whose account is at its work-in-flight limit is tried again this much later (delayed in
 * BullMQ, queued in the database), doubling at each refusal up to BULLMQ_ADMIT_RETRY_MAX_MS: every
 * try costs database reads, and an account with many jobs waiting must not make them a steady
 * load on everyone's database.
 */
export const BULLMQ_ADMIT_RETRY_MS = 200;
export const BULLMQ_ADMIT_RETRY_MAX_MS = 2_000;
/** Jobs whose refusals are counted for the back-off; past it the least recently refused is forgotten (memory stays bounded). */
const ADMIT_RETRY_TRACKED = 10_000;
/** Adding a job id to Redis waits at most this long; past it the job stays queued in the database and the sweep adds it. */
export const BULLMQ_ENQUEUE_TIMEOUT_MS = 1_000;
/** BullMQ's own lock on an active job, and how often stalled jobs (their worker died) are looked for. */
export const BULLMQ_LOCK_MS = 15_000;
export const BULLMQ_STALLED_MS = 5_000;
/** A Redis connection attempt gives up after this long (and retries): an unreachable Redis must not hold a request. */
export const BULLMQ_CONNECT_TIMEOUT_MS = 2_000;
/** Closing the worker and the queue waits at most this long each: the runs are given back in the database already. */
export const BULLMQ_CLOSE_TIMEOUT_MS = 2_000;
/** Candidates a worker's look reads (JobRepository.claimable): more than enough to pass over accounts at their limit. */
export const BULLMQ_CANDIDATES = 50;
/** Claimable jobs a sweep re-adds at most; the rest go in the next sweep. */
export const BULLMQ_SWEEP_BATCH = 1_000;
/** Looking at a job held by another lease again this long after the lease's end, so it has lapsed by then. */
const LEASE_LAPSE_MARGIN_MS = 50;

export interface BullMqQueueOptions {
  redisUrl: string;
  repo: JobRepository;
  /** Jobs run at once by this process; 0 = accept only. */
  workers: number;
  /** Queue name and key prefix: tests use one of their own; every process of a deployment the same. */
  name?: string;
  prefix?: string;
  leaseMs?: number;
  renewMs?: number;
  sweepMs?: number;
  holder?: string;
  onError?: (err: unknown) => void;
  /**
   * Where expected recoveries go (a worker that paused past its lock finds the job taken back:
   * it is simply run again), to be logged below error level; onError unless given.
   */
  onRecovered?: (err: unknown) => void;
  /**
   * Redis went away ('lost', with the error: jobs wait queued in the database meanwhile) or came
   * back ('back'): expected, and recovered from by itself, so logged below error level; connection
   * errors go to onError unless given.
   */
  onRedis?: (state: 'lost' | 'back', err?: unknown) => void;
  cancelReason?: () => Error;
  /** How often turns are checked (JobLeases.checkTurns), and the least a run keeps its turn: JOB_SLICE_MS unless given. */
  sliceMs?: number;
}

/** BullMQ's words for a lock that lapsed while its worker paused: the job went back to the queue and runs again. */
const LOST_LOCK = /^(Missing lock for job|Lock mismatch for job|could not renew lock for job) /;

/** Socket error codes that mean "Redis cannot be reached" (ioredis reconnects by itself). */
const CONNECTION_CODES = new Set(['ECONNREFUSED', 'ECONNRESET', 'ETIMEDOUT', 'EHOSTUNREACH', 'ENETUNREACH', 'EPIPE', 'ENOTFOUND', 'EAI_AGAIN']);

/**
 * ioredis' own words for a command refused while the connection is down, or lost with it (sent,
 * then the connection died: a connection with maxRetriesPerRequest 1 gives it up).
 */
const CONNECTION_MESSAGES = /^(Connection is closed\.|Stream isn't writeable and enableOfflineQueue options is false|Reached the max retries per request limit )/;

function isConnectionError(err: unknown): boolean {
  if (!(err instanceof Error)) return false;
  const code = (err as NodeJS.ErrnoException).code;
  return (code !== undefined && CONNECTION_CODES.has(code)) || CONNECTION_MESSAGES.test(err.message);
}

/** While Redis is down every connection reports each reconnect: one line per message per this long. */
const ERROR_REPEAT_MS = 10_000;

function withTimeout<T>(p: Promise<T>, ms: number, what: string): Promise<T> {
  return withDeadline(p, ms, () => {
    throw new Error(`${what}: Redis did not answer within ${ms} ms`);
  });
}

/**
 * Jobs through BullMQ on Redis (REDIS_URL): only job ids are in the queue; the job, its state,
 * items and result stay in the database. A worker that takes an id claims the job in the
 * database with a lease exactly as the embedded queue does, so a job runs in one process at a
 * time whatever BullMQ does: a job BullMQ hands out twice (its stalled check found a worker's
 * lock lapsed) runs again only once the database lease lapsed too. An account at its
 * work-in-flight limit makes its job wait (delayed in BullMQ, queued in the database); a cancel
 * is published on Redis so the process running the job aborts it at once (and the lease renewal
 * sees it anyway). Every process re-enqueues the database's claimable jobs at start and every
 * few seconds, so jobs created while Redis was unreachable, or left by processes that all died,
 * run once it answers again.
 */
export class BullMqJobQueue implements JobQueue {
  readonly #o: BullMqQueueOptions;
  readonly #onError: (err: unknown) => void;
  readonly #leases: JobLeases;
  readonly #channel: string;
  readonly #queue: Queue;
  /** Refusals in a row per waiting job, for the admit back-off. */
  readonly #refusals = new LRUCache<string, number>({ max: ADMIT_RETRY_TRACKED });
  /** Every connection this queue opened: BullMQ does not close the ones it is given. */
  readonly #clients: Redis[] = [];
  #worker: Worker | undefined;
  #pub: Redis;
  #closed = false;
  /** A connection error was seen and no connection has been ready since. */
  #redisLost = false;

  constructor(opts: BullMqQueueOptions) {
    if (!Number.isInteger(opts.workers) || opts.workers < 0) throw new RangeError('BullMqJobQueue: workers must be a whole number, 0 or more');
    this.#o = opts;
    const report = opts.onError ?? (() => undefined);
    const recovered = opts.onRecovered ?? report;
    const redisState = opts.onRedis;
    const once = withoutRepeats((err) => (LOST_LOCK.test(err instanceof Error ? err.message : String(err)) ? recovered : report)(err), ERROR_REPEAT_MS);
    this.#onError = (err) => {
      if (redisState && isConnectionError(err)) {
        // Said once per outage (whichever of this queue's connections notices first), not per retry.
        if (!this.#redisLost) redisState('lost', err);
        this.#redisLost = true;
        return;
      }
      once(err);
    };
    // No claim loop (BullMQ hands out the turns); its one chore is the sweep, at start and every sweepMs.
    this.#leases = new JobLeases({
      repo: opts.repo,
      onError: this.#onError,
      workers: opts.workers,
      pollMs: opts.sweepMs ?? BULLMQ_SWEEP_MS,
      chores: [{ everyMs: 0, run: async () => void (await this.sweep()) }],
      leaseMs: opts.leaseMs,
      renewMs: opts.renewMs,
      holder: opts.holder,
      cancelReason: opts.cancelReason,
      sliceMs: opts.sliceMs,
    });
    const prefix = opts.prefix ?? BULLMQ_PREFIX;
    const name = opts.name ?? BULLMQ_QUEUE_NAME;
    this.#channel = `${prefix}:${name}:cancel`;
    // The producer fails fast while Redis is down (the job stays queued in the database).
    this.#queue = new Queue(name, { connection: this.#redis({ enableOfflineQueue: false, maxRetriesPerRequest: 1 }), prefix });
    this.#queue.on('error', (err) => this.#onError(err));
    this.#pub = this.#redis({ enableOfflineQueue: false, maxRetriesPerRequest: 1 });
  }

  #redis(extra: RedisOptions): Redis {
    const r = new Redis(this.#o.redisUrl, { connectTimeout: BULLMQ_CONNECT_TIMEOUT_MS, lazyConnect: false, ...extra });
    r.on('error', (err) => this.#onError(err));
    r.on('ready', () => {
      if (!this.#redisLost) return;
      this.#redisLost = false;
      this.#o.onRedis?.('back');
    });
    this.#clients.push(r);
    return r;
  }

  get holder(): string {
    return this.#leases.holder;
  }

  get active(): number {
    return this.#leases.size;
  }

  async enqueue(id: string): Promise<void> {
    try {
      await this.#add(id);
    } catch (err) {
      // Accepted anyway: the job is queued in the database, and the sweep adds it when Redis answers.
      this.#onError(err);
    }
  }

  #add(id: string): Promise<unknown> {
    return withTimeout(this.#queue.add('run', {}, { jobId: id, removeOnComplete: true, removeOnFail: true }), BULLMQ_ENQUEUE_TIMEOUT_MS, 'enqueue');
  }

  start(runner: JobRunner): void {
    if (this.#closed) return;
    this.#leases.start(runner, true);
    if (this.#o.workers === 0) return;
    const sub = this.#redis({ maxRetriesPerRequest: null });
    sub.on('message', (_channel: string, id: string) => this.#leases.cancel(id));
    sub.subscribe(this.#channel).catch((err: unknown) => this.#onError(err));
    const worker = new Worker(this.#o.name ?? BULLMQ_QUEUE_NAME, (job, token) => this.#process(job, token), {
      connection: this.#redis({ maxRetriesPerRequest: null }),
      prefix: this.#o.prefix ?? BULLMQ_PREFIX,
      concurrency: this.#o.workers,
      lockDuration: BULLMQ_LOCK_MS,
      stalledInterval: BULLMQ_STALLED_MS,
      // A stalled job goes back to waiting however often: the database lease decides whether it runs.
      maxStalledCount: Number.MAX_SAFE_INTEGER,
    });
    worker.on('error', (err) => this.#onError(err));
    this.#worker = worker;
  }

  /** Adds every claimable job in the database to the queue (ids already there are left as they are). */
  async sweep(): Promise<number> {
    if (this.#closed) return 0;
    try {
      const candidates = await this.#o.repo.claimable(Date.now(), BULLMQ_SWEEP_BATCH);
      const ids = candidates.map((c) => c.id).filter((id) => !this.#leases.has(id));
      if (ids.length === 0) return 0;
      // One round trip; ids already waiting, delayed or active are left as they are.
      await withTimeout(
        this.#queue.addBulk(ids.map((id) => ({ name: 'run', data: {}, opts: { jobId: id, removeOnComplete: true, removeOnFail: true } }))),
        BULLMQ_ENQUEUE_TIMEOUT_MS * 5,
        'sweep',
      );
      return ids.length;
    } catch (err) {
      this.#onError(err);
      return 0;
    }
  }

  /**
   * Resolves once every connection of this queue's own is ready (cancels can be published; they
   * are not queued while Redis is not connected), or after BULLMQ_CONNECT_TIMEOUT_MS: a
   * short-lived process (the CLI) waits for it before cancelling.
   */
  async connected(): Promise<void> {
    const ready = (r: Redis) => (r.status === 'ready' ? Promise.resolve() : new Promise((resolve) => r.once('ready', resolve)));
    await withTimeout(Promise.all(this.#clients.map(ready)), BULLMQ_CONNECT_TIMEOUT_MS, 'connect').catch((err: unknown) => this.#onError(err));
  }

  async cancel(id: string): Promise<void> {
    this.#leases.cancel(id);
    // The process running it aborts at once; should this not reach it, its next lease renewal does.
    await withTimeout(this.#pub.publish(this.#channel, id), BULLMQ_ENQUEUE_TIMEOUT_MS, 'cancel').catch((err: unknown) => this.#onError(err));
  }

  async close(): Promise<void> {
    if (this.#closed) return;
    this.#closed = true;
    await this.#leases.close();
    if (this.#worker) {
      // Processors give their jobs back (delayed, due now) before the worker lets go. Not waited
      // for past the close timeout: the runs are given back in the database already, and the sweep re-adds them.
      await withTimeout(this.#worker.close(), BULLMQ_CLOSE_TIMEOUT_MS, 'worker close').catch((err: unknown) => {
        this.#onError(err);
        // Redis is gone (the worker waits for its blocking call, or for that connection's first
        // ready): BullMQ's own blocking connection is dropped at once, however far it got, so it
        // stops reconnecting. The worker's other connection is one of this queue's, disconnected below.
        return withTimeout(this.#worker!.getBackend().close(true), BULLMQ_CLOSE_TIMEOUT_MS, 'worker disconnect').catch(() => undefined);
      });
    }
    await withTimeout(this.#queue.close(), BULLMQ_CLOSE_TIMEOUT_MS, 'queue close').catch(() => undefined);
    // A connection whose socket is up (ready, or Redis just back with its first commands still in
    // flight) is quit: Redis answers what was sent before it closes, so nothing sent is left to
    // fail as "Connection is closed." after close() (an unhandled rejection in BullMQ's own
    // connection setup). Any other, and one that does not quit in time, is dropped at once.
    await Promise.all(
      this.#clients.map((r) =>
        r.status === 'ready' || r.status === 'connect'
          ? withTimeout(r.quit(), BULLMQ_CLOSE_TIMEOUT_MS, 'redis quit').then(() => undefined, () => r.disconnect())
          : r.disconnect(),
      ),
    );
  }

  /** Moves the BullMQ job to delayed until `at` (it stays queued or running in the database). */
  async #later(job: Job, token: string | undefined, at: number): Promise<never> {
    await job.moveToDelayed(Math.max(at, Date.now()), token);
    throw new DelayedError();
  }

  /**
   * An entry is a turn to run a job, not an order: the database's round-robin between accounts
   * (JobRepository.claimable, the embedded queue's look) says which job it runs, its own or one of
   * an account that has waited longer, so one account's backlog ahead in the queue delays another's
   * job by one run per worker slot, not by the backlog. The entry stays while its own job may
   * still run: put back (due now) after running another, delayed while its job's account is at its
   * limit or its job is held by a live lease elsewhere; done once its job has finished or is gone.
   */
  async #process(job: Job, token: string | undefined): Promise<void> {
    const id = job.id!;
    if (this.#closed) return this.#later(job, token, Date.now());
    const taken = await this.#takeFairest();
    if (taken) {
      const reason = await this.#run(taken);
      // Shutting down, or the run gave its turn to another account's job: given back in the
      // database; the entry back in the queue, due now, so the job is taken in turn again.
      if (reason instanceof QueueClosingError || reason instanceof TurnYieldedError) return this.#later(job, token, Date.now());
      if (taken.job.id === id) return;
      return this.#later(job, token, Date.now());
    }
    const row = await this.#o.repo.find(id);
    // Finished, cancelled or purged: nothing to run.
    if (!row || (row.status !== 'queued' && row.status !== 'running')) return;
    // Held by a live lease (here or elsewhere): BullMQ's stalled check and the lease must both agree it is abandoned.
    if (row.status === 'running' && row.lease_until !== null && row.lease_until >= Date.now()) return this.#later(job, token, row.lease_until + LEASE_LAPSE_MARGIN_MS);
    // Its account at its limit (or suspended): tried again later, less often the longer it waits.
    const refusals = this.#refusals.get(id) ?? 0;
    this.#refusals.set(id, refusals + 1);
    return this.#later(job, token, Date.now() + Math.min(BULLMQ_ADMIT_RETRY_MS * 2 ** refusals, BULLMQ_ADMIT_RETRY_MAX_MS));
  }

  /** The first claimable job, in round-robin order, that this process may run now, claimed; undefined when none. */
  async #takeFairest(): Promise<TakenJob | undefined> {
    let first: TakenJob | undefined;
    await this.#leases.takeInTurn(BULLMQ_CANDIDATES, () => first === undefined, (t) => {
      first = t;
      this.#refusals.delete(t.job.id);
    });
    return first;
  }

  /** Runs a claimed job with a renewed lease; the abort reason, or undefined when it ran to its end. */
  async #run(taken: TakenJob): Promise<unknown> {
    const { abort, done } = this.#leases.run(taken);
    await done;
    return abort.signal.aborted ? abort.signal.reason : undefined;
  }
}
