import { randomInt } from 'node:crypto';
import { LRUCache } from 'lru-cache';
import { setMaxListeners } from 'node:events';
import { ItemTextError, ValidationError } from '../../errors.js';
import { addIndexesOf, ItemIndexSet } from './items.js';
import type { InFlightSlots } from '../in-flight.js';
import type { JobQueue, JobRunner } from './queue.js';
import { runAsOwner } from '../owner.js';
import type { ClaimCandidate, JobItemBatch, JobRecord, JobRepository } from './repository.js';
import { ItemWriter } from './item-writer.js';
import { RESULT_IS_ITEMS, type JobOperations } from './operations.js';
import { JOB_ITEMS_PAGE, JobViews, jobViewOf, type JobViewText } from './views.js';
import { FINISHED_STATUSES, type JobError, type JobEvents, type JobStatus, type JobView, type JobWebhooks } from './types.js';
import { DAY_MS } from '../../lib/time.js';

export { RESULT_IS_ITEMS, type ItemSet, type JobOperation, type JobOperations } from './operations.js';
export { JOB_ITEMS_PAGE, allItemBatches, jobViewOf } from './views.js';

/**
 * The job service: creates, reads, lists and cancels an account's jobs, and runs one when the
 * queue hands it over (it is the queue's JobRunner). Plain TypeScript: the operations it runs
 * (./operations.ts) and the error body of a failure are given to it as functions.
 */

export interface JobServiceDeps {
  repo: JobRepository;
  queue: JobQueue;
  operations: JobOperations;
  /** The error body the synchronous call would answer for what a run threw. */
  errorBody: (err: unknown) => JobError;
  /** The accounts' work in flight, shared with the probe routes. */
  slots: InFlightSlots;
  /** An account's work-in-flight limit by plan. */
  inFlightLimit: (plan: string) => number;
  /** The key an account's work is counted under (slots, socket budget). */
  ownerKey: (accountId: number) => string;
  events?: JobEvents | undefined;
  /** How jobs are shown; built from `repo`, `operations` and `webhooks` unless given. */
  views?: JobViews | undefined;
  webhooks?: Pick<JobWebhooks, 'attemptsOf'> | undefined;
  ttlDays: number;
  clock?: () => Date;
  onError?: (err: unknown, what: string) => void;
}

/** `job_` and 24 base62 characters (143 bits). */
export const JOB_ID_CHARS = 24;
const BASE62 = '0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz';
export const JOB_ID_RE = /^job_[0-9A-Za-z]{24}$/;
/** Batches read at a time when a job run again reads the indexes of its stored items. */
export const JOB_RESUME_READ_BATCHES = 256;
/**
 * Jobs whose stored item indexes this process keeps after a run that gave its turn back (at
 * most 8 KB each): their next run here reads only the batches written since, not the whole of a
 * 13 MB full-range scan at each turn.
 */
export const JOB_RESUME_CACHED = 64;

/** How often expired jobs are purged. */
export const JOB_PURGE_INTERVAL_MS = 60 * 60 * 1000;

export function newJobId(): string {
  let id = 'job_';
  for (let i = 0; i < JOB_ID_CHARS; i++) id += BASE62[randomInt(62)];
  return id;
}

export interface NewJobRequest {
  accountId: number;
  endpoint: string;
  body: unknown;
  webhookUrl: string | null;
  total: number | undefined;
}

export interface JobPage {
  jobs: JobView[];
  next_cursor: string | null;
  /** With `bodies` asked for: each job's body as it was stored, in the order of `jobs` (a page shows what each checked). */
  bodies?: unknown[];
}

function encodeCursor(row: Pick<JobRecord, 'created_at' | 'id'>): string {
  return Buffer.from(JSON.stringify([row.created_at, row.id])).toString('base64url');
}

function decodeCursor(cursor: string): { created_at: string; id: string } {
  const invalid = () => new ValidationError('cursor', 'is not a cursor from a previous page of this list');
  if (!/^[A-Za-z0-9_-]{1,200}$/.test(cursor)) throw invalid();
  let parsed: unknown;
  try {
    parsed = JSON.parse(Buffer.from(cursor, 'base64url').toString('utf8'));
  } catch {
    throw invalid();
  }
  if (!Array.isArray(parsed) || parsed.length !== 2) throw invalid();
  const [createdAt, id] = parsed as unknown[];
  if (typeof createdAt !== 'string' || !/^\d{4}-\d\d-\d\dT[\d:.]+Z$/.test(createdAt) || typeof id !== 'string' || !JOB_ID_RE.test(id)) throw invalid();
  return { created_at: createdAt, id };
}

export class JobService implements JobRunner {
  readonly #d: JobServiceDeps;
  readonly #clock: () => Date;
  readonly #views: JobViews;
  readonly #waiters = new Map<string, Set<() => void>>();
  /** The stored items of jobs whose last run here gave its turn back: their indexes up to `seq`. */
  readonly #resumes = new LRUCache<string, { seq: number; done: ItemIndexSet }>({ max: JOB_RESUME_CACHED });
  #purgeTimer: NodeJS.Timeout | undefined;

  constructor(deps: JobServiceDeps) {
    this.#d = deps;
    this.#clock = deps.clock ?? (() => new Date());
    const webhooks = deps.webhooks;
    this.#views = deps.views ?? new JobViews({ repo: deps.repo, operations: deps.operations, attemptsOf: webhooks && ((id) => webhooks.attemptsOf(id)) });
  }

  /** Starts running jobs (the queue) and the periodic TTL purge. */
  start(): void {
    this.#d.queue.start(this);
    this.#purgeTimer = setInterval(() => void this.purge().catch((err) => this.#d.onError?.(err, 'job purge')), JOB_PURGE_INTERVAL_MS);
    this.#purgeTimer.unref();
    void this.purge().catch((err) => this.#d.onError?.(err, 'job purge'));
  }

  async close(): Promise<void> {
    clearInterval(this.#purgeTimer);
    await this.#d.queue.close();
    for (const set of this.#waiters.values()) for (const wake of set) wake();
  }

  #cutoff(): string {
    return new Date(this.#clock().getTime() - this.#d.ttlDays * DAY_MS).toISOString();
  }

  /** Deletes jobs past their TTL; returns how many. */
  purge(): Promise<number> {
    return this.#d.repo.purge(this.#cutoff());
  }

  /** `answered` settles once the creating request's answer is out (JobQueue.enqueue). */
  async create(req: NewJobRequest, answered?: Promise<unknown>): Promise<JobView> {
    const row = await this.#d.repo.create({
      id: newJobId(),
      account_id: req.accountId,
      endpoint: req.endpoint,
      body: JSON.stringify(req.body),
      webhook_url: req.webhookUrl,
      progress_total: req.total ?? 1,
      created_at: this.#clock().toISOString(),
    });
    await this.#d.queue.enqueue(row.id, answered);
    // What view() would read back for a job nothing has run yet: no items, no delivery attempts.
    return jobViewOf(row, this.#views.hasItems(row.endpoint) ? [] : null);
  }

  /** The account's job: undefined for a malformed id (no query), another account's, an unknown or an expired one. */
  async find(accountId: number, id: string): Promise<JobRecord | undefined> {
    if (!JOB_ID_RE.test(id)) return undefined;
    const row = await this.#d.repo.find(id);
    if (!row || row.account_id !== accountId || row.created_at < this.#cutoff()) return undefined;
    return row;
  }

  async get(accountId: number, id: string): Promise<JobView | undefined> {
    const row = await this.find(accountId, id);
    return row && this.view(row);
  }

  /**
   * The account's jobs, newest first, a page at a time. `resultItems`: at most that many items of
   * each result (JobViews.viewPart), for a list that shows none (the dashboard's): a page of
   * full-range scans read whole was 13 MB of items each.
   */
  async list(
    accountId: number,
    opts: { status?: JobStatus | undefined; limit: number; cursor?: string | undefined; resultItems?: number | undefined; bodies?: boolean | undefined },
  ): Promise<JobPage> {
    const before = opts.cursor === undefined ? undefined : decodeCursor(opts.cursor);
    const rows = await this.#d.repo.list(accountId, { status: opts.status, before, limit: opts.limit + 1 });
    const cutoff = this.#cutoff();
    const live = rows.filter((r) => r.created_at >= cutoff);
    const page = live.slice(0, opts.limit);
    const more = live.length > opts.limit;
    const view = opts.resultItems === undefined ? (r: JobRecord) => this.view(r) : async (r: JobRecord) => (await this.#views.viewPart(r, opts.resultItems!)).view;
    const jobs = await Promise.all(page.map(view));
    const next_cursor = more ? encodeCursor(page[page.length - 1]!) : null;
    return opts.bodies === true ? { jobs, next_cursor, bodies: page.map((r) => JSON.parse(r.body) as unknown) } : { jobs, next_cursor };
  }

  /** Cancels a queued or running job: its view, 'finished' when it had already finished, undefined when there is none. */
  async cancel(accountId: number, id: string): Promise<JobView | 'finished' | undefined> {
    const row = await this.find(accountId, id);
    if (!row) return undefined;
    if (FINISHED_STATUSES.has(row.status)) return 'finished';
    if (!(await this.#d.repo.cancel(id, accountId, this.#clock().toISOString()))) {
      const now = await this.find(accountId, id);
      return now ? 'finished' : undefined;
    }
    // Its run, wherever it is, stops: here at once (its sockets close), elsewhere at its next lease renewal.
    await this.#d.queue.cancel(id);
    const view = await this.view((await this.#d.repo.find(id))!);
    this.#finished(view, accountId);
    return view;
  }

  /**
   * Jobs cancelled in the database by something other than a DELETE (their account was
   * suspended): their runs stop as a DELETE stops them, here at once and elsewhere as told by the
   * queue; streams see the change. No event is sent for them.
   */
  async stopped(ids: readonly string[]): Promise<void> {
    // All at once: each cancel may wait out its publish timeout while Redis is away, and an
    // account can have many jobs (one after another, the suspension would hang that many times).
    await Promise.all(ids.map((id) => this.#d.queue.cancel(id)));
    for (const id of ids) this.#changed(id);
  }

  /** The batches of the items completed after `afterSeq`, in completion order (src/domain/jobs/items.ts). */
  itemBatches(id: string, afterSeq: number, limit = JOB_ITEMS_PAGE): Promise<JobItemBatch[]> {
    return this.#d.repo.itemBatches(id, afterSeq, limit);
  }

  /** Resolves when this process records a change of the job, after `ms`, or when `signal` aborts. */
  waitForChange(id: string, ms: number, signal: AbortSignal): Promise<void> {
    if (signal.aborted) return Promise.resolve();
    return new Promise((resolve) => {
      let set = this.#waiters.get(id);
      if (!set) this.#waiters.set(id, (set = new Set()));
      const wake = (): void => {
        clearTimeout(timer);
        signal.removeEventListener('abort', wake);
        set.delete(wake);
        if (set.size === 0 && this.#waiters.get(id) === set) this.#waiters.delete(id);
        resolve();
      };
      const timer = setTimeout(wake, ms);
      timer.unref();
      signal.addEventListener('abort', wake, { once: true });
      set.add(wake);
    });
  }

  #changed(id: string): void {
    const set = this.#waiters.get(id);
    if (set) for (const wake of [...set]) wake();
  }

  #finished(view: JobView, accountId: number): void {
    this.#changed(view.id);
    if (view.webhook_url === null) return;
    try {
      this.#d.events?.finished(view, accountId);
    } catch (err) {
      this.#d.onError?.(err, 'job finished event');
    }
  }

  /** `view` as JSON text, for a stream's last line and the JSON answers (JobViews.viewText). */
  viewText(row: JobRecord, signal?: AbortSignal): Promise<JobViewText> {
    return this.#views.viewText(row, signal);
  }

  /** How jobs are read back in pieces (a page's part of a result, a download's items). */
  get views(): JobViews {
    return this.#views;
  }

  /** The job as the API shows it. */
  view(row: JobRecord): Promise<JobView> {
    return this.#views.view(row);
  }

  // JobRunner: the queue asks before it claims, and runs what it claimed.

  admit(candidate: ClaimCandidate): Promise<(() => void) | null> {
    return this.#d.slots.tryAcquire(this.#d.ownerKey(candidate.account_id), this.#d.inFlightLimit(candidate.plan));
  }

  /** Calls that skip their stored items when run again (a port scan) may give their turn back between batches. */
  resumable(job: JobRecord): boolean {
    const op = this.#d.operations(job.endpoint);
    return op?.items !== undefined && op.skipsDone === true;
  }

  /**
   * The items an earlier run of the job stored: their indexes, and the last seq (this run's
   * items go on after it). Read from the stored lines' `"index":`, items not parsed; only the
   * batches written since when this process ran the job last and kept them (JOB_RESUME_CACHED).
   */
  async #storedItems(job: JobRecord): Promise<{ seq: number; done: ItemIndexSet }> {
    const cached = this.#resumes.get(job.id);
    this.#resumes.delete(job.id);
    const done = cached?.done ?? new ItemIndexSet(job.progress_total);
    let seq = cached?.seq ?? 0;
    // A first run has nothing stored (its progress is 0 until its first write).
    if (job.progress_done === 0 && seq === 0) return { seq, done };
    for (;;) {
      const page = await this.#d.repo.itemBatches(job.id, seq, JOB_RESUME_READ_BATCHES);
      for (const b of page) {
        if (b.first_seq !== seq + 1) throw new Error(`job ${job.id}: stored items ${seq + 1}-${b.first_seq - 1} are missing`);
        addIndexesOf(b, done);
        seq = b.last_seq;
      }
      if (page.length < JOB_RESUME_READ_BATCHES) return { seq, done };
    }
  }

  #keepStored(jobId: string, stored: { seq: number; done: ItemIndexSet }): void {
    this.#resumes.set(jobId, stored);
  }

  async run(job: JobRecord, holder: string, signal: AbortSignal): Promise<void> {
    const { repo } = this.#d;
    const op = this.#d.operations(job.endpoint);
    const finish = async (outcome: { result: string | typeof RESULT_IS_ITEMS } | { error: JobError }, done: number, last: JobItemBatch | null = null, total?: number): Promise<void> => {
      const ok = await repo.finish(job.id, holder, {
        status: 'result' in outcome ? 'succeeded' : 'failed',
        // RESULT_IS_ITEMS: the items written are the result (JobViews.resultText), kept once.
        result: 'result' in outcome && outcome.result !== RESULT_IS_ITEMS ? outcome.result : null,
        error: 'error' in outcome ? JSON.stringify(outcome.error) : null,
        finished_at: this.#clock().toISOString(),
        progress_done: done,
        ...(total === undefined ? {} : { progress_total: total }),
      }, last);
      if (!ok) return;
      // Only a job with a webhook has an event to build its view for (a 1000-item result read back and parsed).
      if (job.webhook_url === null) this.#changed(job.id);
      else this.#finished(await this.view((await repo.find(job.id))!), job.account_id);
    };
    if (!op) return finish({ error: this.#d.errorBody(new Error(`no operation ${job.endpoint}`)) }, 0);

    // A job run again (a lapsed lease, a give-back, a yielded turn) goes on from the items it
    // stored: they are not probed again, and its seqs go on after them.
    const stored = op.items ? await this.#storedItems(job) : undefined;
    // Items are written in batches as they complete; the last of them go with the outcome.
    const items = new ItemWriter(async (batch) => {
      await repo.addItems(job.id, holder, batch, batch.last_seq);
      this.#changed(job.id);
    }, stored?.seq ?? 0);
    const added = new ItemIndexSet(stored ? job.progress_total : 0);
    const onItem = (index: number, item: () => string): void => {
      added.add(index);
      items.add(index, item);
    };

    setMaxListeners(0, signal);
    let outcome: { result: string | typeof RESULT_IS_ITEMS } | { error: JobError };
    try {
      const body = JSON.parse(job.body) as unknown;
      const ctx = { signal, ...(op.items ? { onItem, done: stored!.done } : {}) };
      const result = await runAsOwner(this.#d.ownerKey(job.account_id), () => op.run(body, ctx));
      outcome = { result };
    } catch (err) {
      outcome = { error: this.#d.errorBody(err) };
    }
    let last: JobItemBatch | null = null;
    try {
      last = await items.end();
    } catch (err) {
      // A write the database refused is thrown (the job runs again once its lease lapses), unless
      // the run was aborted; an item the answer's serializer refused fails the job, as the
      // synchronous call answers 500.
      if (!signal.aborted && !(err instanceof ItemTextError)) throw err;
      if (err instanceof ItemTextError) outcome = { error: this.#d.errorBody(err.cause) };
      if (signal.aborted) return;
    }
    if (signal.aborted) {
      // Cancelled, taken over, shutting down or giving its turn back: whoever aborted it decides
      // what the job becomes. The items that completed are kept while the lease is still ours (a
      // give-back, a yielded turn): the run that goes on does not probe them again.
      if (last !== null && !(await repo.addItems(job.id, holder, last, last.last_seq).catch(() => false))) return;
      if (stored) {
        stored.done.addAll(added);
        this.#keepStored(job.id, { seq: last?.last_seq ?? items.written, done: stored.done });
      }
      return;
    }
    if ('result' in outcome && op.itemsAtMost === true && op.items) {
      // The bound was not the count: what the run (and any run before it) reported is.
      const reported = (stored?.done.size ?? 0) + added.size;
      return finish(outcome, reported, last, reported);
    }
    await finish(outcome, 'result' in outcome ? job.progress_total : (last?.last_seq ?? items.written), last);
  }
}
