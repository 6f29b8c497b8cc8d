/**
 * The embedded webhook delivery queue: due deliveries are claimed from the database with a
 * lease and attempted here. Every instance (and worker) sharing the database runs one; the
 * lease makes each attempt one instance's, and a delivery whose instance died is claimed again
 * once its lease lapses. Nothing is held in memory that a restart would lose.
 */
import { randomBytes } from 'node:crypto';
import { hostname } from 'node:os';
import type { WebhookDelivery } from '../../domain/webhooks/delivery.js';
import type { WebhookDeliveryRepository } from '../store/webhook-deliveries.js';

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
export const WEBHOOK_KEEP_MS = 7 * 86_400_000;
/** How often finished deliveries past WEBHOOK_KEEP_MS are purged. */
const PURGE_EVERY_MS = 3_600_000;

export interface EmbeddedWebhookQueueOptions {
  deliveries: WebhookDeliveryRepository;
  delivery: WebhookDelivery;
  pollMs?: number;
  leaseMs?: number;
  concurrency?: number;
  /** WEBHOOK_PER_ACCOUNT_CONCURRENCY unless given. */
  perAccount?: number;
  keepMs?: number;
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

  constructor(opts: EmbeddedWebhookQueueOptions) {
    this.#deliveries = opts.deliveries;
    this.#delivery = opts.delivery;
    this.#pollMs = opts.pollMs ?? WEBHOOK_POLL_MS;
    this.#leaseMs = opts.leaseMs ?? WEBHOOK_LEASE_MS;
    this.#concurrency = opts.concurrency ?? WEBHOOK_CONCURRENCY;
    this.#perAccount = opts.perAccount ?? WEBHOOK_PER_ACCOUNT_CONCURRENCY;
    this.#keepMs = opts.keepMs ?? WEBHOOK_KEEP_MS;
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
      if (free <= 0) return;
      const now = this.#now();
      const claimed = await this.#deliveries.claim(this.owner, now, this.#leaseMs, free, this.#perAccount);
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
