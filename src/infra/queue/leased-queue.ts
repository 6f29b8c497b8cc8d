import { randomBytes } from 'node:crypto';
import { hostname } from 'node:os';
import { LeaseLostError, QueueClosingError, TurnYieldedError } from '../../errors.js';

/**
 * One leased queue, the way every queue of work kept in the database runs it (jobs, embedded or
 * through BullMQ; webhook deliveries): an item is claimed in the database with a lease under this
 * process's name (its holder), so it runs in one process at a time and an item whose process died is run
 * again once its lease lapses. Each claimed item runs with its lease renewed (a renewal that finds
 * it no longer ours aborts the run), and when the queue closes its runs are aborted and their
 * claims given back, so another process takes them at once. A queue that polls (start()) looks
 * for due items when kicked (new work, a run's end that left work behind) and every `pollMs`, and
 * does its periodic chores (purges, sweeps) in the same looks.
 *
 * What differs between queues is the LeasedWork: what to claim, how to run one, how to renew and
 * give back its lease.
 */

/** A lease holder's name: unique per process (and per queue). */
export function leaseHolder(): string {
  return `${hostname()}:${process.pid}:${randomBytes(6).toString('hex')}`;
}

/** What one queue supplies; the rest (runs, heartbeat, lapse, close, the claim loop) is LeasedQueue's. */
export interface LeasedWork<W> {
  /** The item's id among this process's runs (cancel, has). */
  idOf(item: W): string;
  /**
   * Claims due items for `holder` while `room()` is above 0 (fairly between accounts: takeInTurn
   * or the store's claim), handing each to `launch` as soon as it is claimed. True when claimable
   * items were left behind: a run's end then looks again. Needed only by a queue that polls.
   */
  claim?(holder: string, room: () => number, launch: (item: W) => void): Promise<boolean>;
  /**
   * Runs a claimed item to its end. `signal` aborts when it is cancelled, its lease is lost or the
   * queue closes. What it returns is passed to giveBack.
   */
  run(item: W, holder: string, signal: AbortSignal): Promise<unknown>;
  /**
   * Renews the item's lease, every `renewMs` while it runs: false once it is no longer this
   * holder's (cancelled, taken over), and the run is aborted with LeaseLostError. Without it there
   * is no heartbeat: the lease outlasts a run.
   */
  renew?(item: W, holder: string): Promise<boolean>;
  /** The run is over (or never started): frees what its claim held in this process (an account's slot). */
  ended?(item: W): void;
  /**
   * The queue closed while the item was claimed (`reason` QueueClosingError), or its run gave its
   * turn back (TurnYieldedError, LeasedQueue.yield): its run was aborted (or never started) and is
   * over. Gives the claim back so another process (or this one's next look) takes it at once.
   * `outcome` is what run returned; undefined when it threw or never started.
   */
  giveBack(item: W, holder: string, outcome: unknown, reason: QueueClosingError | TurnYieldedError): Promise<unknown>;
}

/** Something a polling queue does now and then in its looks: a purge, a sweep. */
export interface Chore {
  /** At the first look, then at the first look this long after the last run. */
  everyMs: number;
  /** True when more is waiting: it runs again at the next look. */
  run(now: number): Promise<boolean | void>;
}

/** An item running in this process: how to stop it, and when it has stopped. */
export interface LeasedRun {
  readonly abort: AbortController;
  readonly done: Promise<void>;
}

export interface LeasedQueueOptions<W> {
  work: LeasedWork<W>;
  /** Items run at once by the claim loop (0: it claims none). */
  concurrency: number;
  /** How often the claim loop looks without being kicked. */
  pollMs: number;
  /** How often a running item's lease is renewed (with work.renew). */
  renewMs?: number | undefined;
  /** This process's name in leases; leaseHolder() unless given. */
  holder?: string | undefined;
  chores?: readonly Chore[];
  now?: (() => number) | undefined;
  onError: (err: unknown) => void;
}

export class LeasedQueue<W> {
  readonly holder: string;
  readonly #work: LeasedWork<W>;
  readonly #concurrency: number;
  readonly #pollMs: number;
  readonly #renewMs: number | undefined;
  readonly #chores: ReadonlyArray<{ chore: Chore; next: number }>;
  readonly #now: () => number;
  readonly #onError: (err: unknown) => void;
  /** Runs in this process now, and the latest run of each item (claimed again here only once its lease lapsed). */
  readonly #running = new Set<LeasedRun>();
  readonly #byId = new Map<string, LeasedRun>();
  #started = false;
  #closing = false;
  #timer: NodeJS.Timeout | undefined;
  /** The look under way, if any. */
  #looking: Promise<void> | undefined;
  #again = false;
  /** The last look left claimable items behind (no room, an account at its limit, or none made yet). */
  #leftBehind: boolean;

  constructor(o: LeasedQueueOptions<W>) {
    this.#work = o.work;
    this.#concurrency = o.concurrency;
    this.#pollMs = o.pollMs;
    this.#renewMs = o.renewMs;
    this.holder = o.holder ?? leaseHolder();
    this.#chores = (o.chores ?? []).map((chore) => ({ chore, next: 0 }));
    this.#now = o.now ?? Date.now;
    this.#onError = o.onError;
    this.#leftBehind = o.work.claim !== undefined;
  }

  /** Runs in this process now. */
  get size(): number {
    return this.#running.size;
  }

  get closing(): boolean {
    return this.#closing;
  }

  has(id: string): boolean {
    return this.#byId.has(id);
  }

  /** Starts the claim loop (and the chores): a look now, then when kicked and every pollMs. */
  start(): void {
    if (this.#started || this.#closing) return;
    this.#started = true;
    this.kick();
  }

  /** Looks for due items now (once the look under way, if any, is over). */
  kick(): void {
    if (!this.#started || this.#closing) return;
    if (this.#looking) {
      this.#again = true;
      return;
    }
    clearTimeout(this.#timer);
    this.#looking = this.#look().finally(() => {
      this.#looking = undefined;
      if (this.#closing) return;
      if (this.#again) {
        this.#again = false;
        this.kick();
        return;
      }
      this.#timer = setTimeout(() => this.kick(), this.#pollMs);
      // Polling alone never keeps a process alive.
      this.#timer.unref();
    });
  }

  async #look(): Promise<void> {
    try {
      const claim = this.#work.claim;
      if (claim) {
        const room = (): number => (this.#closing ? 0 : this.#concurrency - this.#running.size);
        // No room: nothing claimed, and whatever asked for this look waits for a run's end; the chores still run.
        this.#leftBehind = room() > 0 ? await claim.call(this.#work, this.holder, room, (item) => this.run(item)) : true;
      }
      const now = this.#now();
      for (const c of this.#chores) {
        if (now < c.next) continue;
        c.next = now + c.chore.everyMs;
        // More waiting (a backlog after an outage): at the next look, not a period later.
        if ((await c.chore.run(now)) === true) c.next = now;
      }
    } catch (err) {
      // A look that failed may have left anything behind: a run's end looks again.
      if (this.#work.claim) this.#leftBehind = true;
      this.#onError(err);
    }
  }

  /**
   * Runs an item this process has claimed, with its lease renewed; once it is over it is no
   * longer counted, and a look follows when the last one left items behind. Claimed as the queue
   * closes, it does not run: its claim is given back at once.
   */
  run(item: W): LeasedRun {
    const id = this.#work.idOf(item);
    const abort = new AbortController();
    if (this.#closing) abort.abort(new QueueClosingError());
    const run: { abort: AbortController; done: Promise<void> } = { abort, done: Promise.resolve() };
    // Counted before it starts: its end (which may come at once) finds it there.
    this.#running.add(run);
    this.#byId.set(id, run);
    run.done = this.#runToEnd(id, item, run);
    return run;
  }

  async #runToEnd(id: string, item: W, run: LeasedRun): Promise<void> {
    const { abort } = run;
    const { renew } = this.#work;
    const renewal =
      renew && this.#renewMs !== undefined && !abort.signal.aborted
        ? setInterval(() => {
            renew.call(this.#work, item, this.holder).then(
              (held) => {
                if (!held && !abort.signal.aborted) abort.abort(new LeaseLostError());
              },
              (err: unknown) => this.#onError(err),
            );
          }, this.#renewMs)
        : undefined;
    renewal?.unref();
    let outcome: unknown;
    try {
      if (!abort.signal.aborted) outcome = await this.#work.run(item, this.holder, abort.signal);
    } catch (err) {
      this.#onError(err);
    } finally {
      clearInterval(renewal);
      this.#work.ended?.(item);
      const reason: unknown = abort.signal.reason;
      if (reason instanceof QueueClosingError || reason instanceof TurnYieldedError) {
        await this.#work.giveBack(item, this.holder, outcome, reason).catch((err: unknown) => this.#onError(err));
      }
      this.#running.delete(run);
      if (this.#byId.get(id) === run) this.#byId.delete(id);
      // A slot (and the account's share) is free again: another look, when the last one left items
      // behind (a yielded turn always did: the waiting work it gave way to). New items kick a
      // look of their own, and the poll finds other processes' items.
      if (this.#leftBehind || reason instanceof TurnYieldedError) this.kick();
    }
  }

  /**
   * The item's run here, if any, gives its turn back to other work: it stops at once (what it
   * completed is its own to keep), its claim is given back (giveBack) and a look follows.
   */
  yield(id: string): void {
    const run = this.#byId.get(id);
    if (run && !run.abort.signal.aborted) run.abort.abort(new TurnYieldedError());
  }

  /** The item was cancelled: its run here, if any, stops at once with `reason`. */
  cancel(id: string, reason: unknown): void {
    this.#byId.get(id)?.abort.abort(reason);
  }

  /** Stops looking, aborts every run (their claims are given back) and waits for the look and the runs to end. */
  async close(): Promise<void> {
    this.#closing = true;
    clearTimeout(this.#timer);
    while (this.#looking || this.#running.size > 0) {
      const runs = [...this.#running];
      for (const r of runs) if (!r.abort.signal.aborted) r.abort.abort(new QueueClosingError());
      await Promise.allSettled([this.#looking, ...runs.map((r) => r.done)]);
    }
  }
}
