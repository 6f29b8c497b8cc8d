/**
 * The embedded webhook delivery queue: due deliveries are claimed from the database with a
 * lease and attempted here. Every instance (and worker) sharing the database runs one; the
 * lease makes each attempt one instance's, and a delivery whose instance died is claimed again
 * once its lease lapses. Nothing is held in memory that a restart would lose. Every
 * WEBHOOK_SWEEP_MS (and at start) it also queues the events of jobs finished within
 * WEBHOOK_SWEEP_WINDOW_MS that have none (the enqueue after the job finished failed, or its
 * process died first): such an event is queued late rather than never, and still once (one row
 * per job).
 */
import { randomBytes } from 'node:crypto';
import { hostname } from 'node:os';
import type { WebhookDelivery } from '../../domain/webhooks/delivery.js';
import type { WebhookDeliveryRepository } from '../../domain/webhooks/repository.js';
import { DAY_MS } from '../../lib/time.js';

/** How often the database is asked for due deliveries (a new event is sent at once, without waiting). */
export const WEBHOOK_POLL_MS = 1_000;
/** A claim lapses after this: far beyond one attempt (resolve, then the 10 s timeout), so a live instance always finishes first. */
export const WEBHOOK_LEASE_MS = 60_000;
/** Attempts one instance runs at once. */
export const WEBHOOK_CONCURRENCY = 8;
/**
 * Attempts of one account under way at once, over every instance sharing the database: an
 * account with thousands of events and a receiver that answers only at the timeout holds this
 * many slots, never all of them, and everyone else's events still go out at once.
 */
export const WEBHOOK_PER_ACCOUNT_CONCURRENCY = 2;
/** Finished deliveries and their attempts are kept this long unless told (the app passes NETDIAG_JOB_TTL_DAYS: as long as jobs). */
export const WEBHOOK_KEEP_MS = 7 * DAY_MS;
/** How often finished deliveries past WEBHOOK_KEEP_MS are purged. */
const PURGE_EVERY_MS = 3_600_000;
/** How often each instance looks for finished jobs whose event was never queued; also at start. */
export const WEBHOOK_SWEEP_MS = 60_000;
/**
 * How far back it looks (finished_at): a job whose event was lost longer ago than this (every
 * instance down for a day) stays without one. At most half of keepMs, so a job in the window
 * still has its delivery if it ever had one (purge forgets deliveries after keepMs).
 */
export const WEBHOOK_SWEEP_WINDOW_MS = DAY_MS;
/** Jobs finished this recently are left to the instance that finished them, usually queueing the event just now. */
export const WEBHOOK_SWEEP_GRACE_MS = 30_000;
/** Jobs per sweep; after a full page that queued something, the next poll sweeps again. */
export const WEBHOOK_SWEEP_PAGE = 100;

export interface EmbeddedWebhookQueueOptions {
  deliveries: WebhookDeliveryRepository;
  delivery: WebhookDelivery;
  pollMs?: number;
  leaseMs?: number;
  concurrency?: number;
  /** WEBHOOK_PER_ACCOUNT_CONCURRENCY unless given. */
  perAccount?: number;
  keepMs?: number;
  /** WEBHOOK_SWEEP_MS, WEBHOOK_SWEEP_WINDOW_MS and WEBHOOK_SWEEP_GRACE_MS unless given. */
  sweepMs?: number;
  sweepWindowMs?: number;
  sweepGraceMs?: number;
  /** This instance's name on its leases; unique unless given. */
  owner?: string;
  now?: () => number;
  onError?: (err: unknown) => void;
}

export class EmbeddedWebhookQueue {
  readonly owner: string;
  readonly #deliveries: WebhookDeliveryRepository;
  readonly #delivery: WebhookDelivery;
  readonly #pollMs: number;
  readonly #leaseMs: number;
  readonly #concurrency: number;
  readonly #perAccount: number;
  readonly #keepMs: number;
  readonly #sweepMs: number;
  readonly #sweepWindowMs: number;
  readonly #sweepGraceMs: number;
  readonly #now: () => number;
  readonly #onError: (err: unknown) => void;
  readonly #inFlight = new Set<Promise<void>>();
  readonly #abort = new AbortController();
  #timer: NodeJS.Timeout | undefined;
  #polling = false;
  #again = false;
  #started = false;
  #closed = false;
  #lastPurge = 0;
  #nextSweep = 0;

  constructor(opts: EmbeddedWebhookQueueOptions) {
    this.#deliveries = opts.deliveries;
    this.#delivery = opts.delivery;
    this.#pollMs = opts.pollMs ?? WEBHOOK_POLL_MS;
    this.#leaseMs = opts.leaseMs ?? WEBHOOK_LEASE_MS;
    this.#concurrency = opts.concurrency ?? WEBHOOK_CONCURRENCY;
    this.#perAccount = opts.perAccount ?? WEBHOOK_PER_ACCOUNT_CONCURRENCY;
    this.#keepMs = opts.keepMs ?? WEBHOOK_KEEP_MS;
    this.#sweepMs = opts.sweepMs ?? WEBHOOK_SWEEP_MS;
    this.#sweepWindowMs = Math.min(opts.sweepWindowMs ?? WEBHOOK_SWEEP_WINDOW_MS, this.#keepMs / 2);
    this.#sweepGraceMs = opts.sweepGraceMs ?? WEBHOOK_SWEEP_GRACE_MS;
    this.#now = opts.now ?? Date.now;
    this.#onError = opts.onError ?? (() => undefined);
    this.owner = opts.owner ?? `${hostname()}:${process.pid}:${randomBytes(4).toString('hex')}`;
    if (this.#leaseMs <= opts.delivery.timeoutMs) {
      throw new RangeError(`EmbeddedWebhookQueue: leaseMs (${this.#leaseMs}) must exceed the delivery timeout (${opts.delivery.timeoutMs}), or another instance could send the same attempt`);
    }
  }

  /** Starts polling; an event queued by this instance's WebhookDelivery is sent at once. */
  start(): void {
    if (this.#started || this.#closed) return;
    this.#started = true;
    this.#delivery.onQueued = () => this.kick();
    this.kick();
  }

  /** Looks for due deliveries now. */
  kick(): void {
    if (!this.#started || this.#closed) return;
    if (this.#polling) {
      this.#again = true;
      return;
    }
    clearTimeout(this.#timer);
    this.#polling = true;
    void this.#poll().finally(() => {
      this.#polling = false;
      if (this.#closed) return;
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

  async #poll(): Promise<void> {
    try {
      const free = this.#concurrency - this.#inFlight.size;
      const now = this.#now();
      // Every slot busy: nothing to claim, but the purge and the sweep still run.
      const claimed = free > 0 ? await this.#deliveries.claim(this.owner, now, this.#leaseMs, free, this.#perAccount) : [];
      for (const delivery of claimed) {
        const run: Promise<void> = this.#delivery
          .attempt(delivery, this.owner, this.#abort.signal)
          .then(async (recorded) => {
            if (!recorded && this.#abort.signal.aborted) await this.#deliveries.release(delivery.id, this.owner);
          })
          .catch((err: unknown) => this.#onError(err))
          .finally(() => {
            this.#inFlight.delete(run);
            // A freed slot (or an account's share freed by it) may have due work waiting behind it.
            this.kick();
          });
        this.#inFlight.add(run);
      }
      if (now - this.#lastPurge >= PURGE_EVERY_MS) {
        this.#lastPurge = now;
        await this.#deliveries.purge(new Date(now - this.#keepMs).toISOString());
      }
      if (now >= this.#nextSweep) {
        this.#nextSweep = now + this.#sweepMs;
        const { found, queued } = await this.#delivery.enqueueMissed(new Date(now - this.#sweepWindowMs), new Date(now - this.#sweepGraceMs), WEBHOOK_SWEEP_PAGE);
        // More may be waiting (a backlog after an outage): not a minute per page.
        if (found === WEBHOOK_SWEEP_PAGE && queued > 0) this.#nextSweep = now;
      }
    } catch (err) {
      this.#onError(err);
    }
  }

  /** Attempts under way now. */
  get active(): number {
    return this.#inFlight.size;
  }

  /** Stops polling, aborts attempts under way (their claims are given back, unrecorded) and waits for them. */
  async close(): Promise<void> {
    if (this.#closed) return;
    this.#closed = true;
    clearTimeout(this.#timer);
    this.#abort.abort();
    while (this.#polling || this.#inFlight.size > 0) {
      await Promise.allSettled([...this.#inFlight]);
      if (this.#polling) await new Promise((resolve) => setTimeout(resolve, 5));
    }
  }
}
