/**
 * The embedded webhook delivery queue: due deliveries are claimed from the database with a
 * lease and attempted here. Every instance (and worker) sharing the database runs one; the
 * lease makes each attempt one instance's, and a delivery whose instance died is claimed again
 * once its lease lapses. Nothing is held in memory that a restart would lose. Every
 * WEBHOOK_SWEEP_MS (and at start) it also queues the events of jobs finished within
 * WEBHOOK_SWEEP_WINDOW_MS that have none (the enqueue after the job finished failed, or its
 * process died first): such an event is queued late rather than never, and still once (one row
 * per job). The claim loop, leases and close are the leased queue's (infra/queue); the share of
 * each account is the store's claim (WebhookDeliveryRepository.claim, `perAccount`).
 */
import type { WebhookDelivery } from '../../domain/webhooks/delivery.js';
import type { ClaimedWebhookDelivery, WebhookDeliveryRepository } from '../../domain/webhooks/repository.js';
import { DAY_MS } from '../../lib/time.js';
import { LeasedQueue } from '../queue/index.js';

/** How often the database is asked for due deliveries (a new event is sent at once, without waiting). */
export const WEBHOOK_POLL_MS = 1_000;
/** A claim lapses after this: far beyond one attempt (the 15 s timeout covers resolve to answer), so a live instance always finishes first. */
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
  /** Attempts deliveries; its onQueued should kick this queue (createWebhooks wires it). */
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
  holder?: string;
  now?: () => number;
  onError?: (err: unknown) => void;
}

export class EmbeddedWebhookQueue {
  readonly #queue: LeasedQueue<ClaimedWebhookDelivery>;

  constructor(opts: EmbeddedWebhookQueueOptions) {
    const { deliveries, delivery } = opts;
    const leaseMs = opts.leaseMs ?? WEBHOOK_LEASE_MS;
    const perAccount = opts.perAccount ?? WEBHOOK_PER_ACCOUNT_CONCURRENCY;
    const keepMs = opts.keepMs ?? WEBHOOK_KEEP_MS;
    const sweepWindowMs = Math.min(opts.sweepWindowMs ?? WEBHOOK_SWEEP_WINDOW_MS, keepMs / 2);
    const sweepGraceMs = opts.sweepGraceMs ?? WEBHOOK_SWEEP_GRACE_MS;
    const now = opts.now ?? Date.now;
    if (leaseMs <= delivery.timeoutMs) {
      throw new RangeError(`EmbeddedWebhookQueue: leaseMs (${leaseMs}) must exceed the delivery timeout (${delivery.timeoutMs}), or another instance could send the same attempt`);
    }
    this.#queue = new LeasedQueue<ClaimedWebhookDelivery>({
      work: {
        idOf: (d) => String(d.id),
        claim: async (holder, room, launch) => {
          for (const d of await deliveries.claim(holder, now(), leaseMs, room(), perAccount)) launch(d);
          // A freed slot (or an account's share freed by it) may have due work waiting behind it.
          return true;
        },
        // No renewal: the lease outlasts an attempt (leaseMs > the delivery timeout).
        run: (d, holder, signal) => delivery.attempt(d, holder, signal),
        // Aborted before an answer (or never attempted): nothing recorded, due again at once.
        giveBack: async (d, holder, recorded) => {
          if (recorded !== true) await deliveries.release(d.id, holder);
        },
      },
      concurrency: opts.concurrency ?? WEBHOOK_CONCURRENCY,
      pollMs: opts.pollMs ?? WEBHOOK_POLL_MS,
      holder: opts.holder,
      now,
      chores: [
        { everyMs: PURGE_EVERY_MS, run: async (at) => void (await deliveries.purge(new Date(at - keepMs).toISOString())) },
        {
          everyMs: opts.sweepMs ?? WEBHOOK_SWEEP_MS,
          run: async (at) => {
            const { found, queued } = await delivery.enqueueMissed(new Date(at - sweepWindowMs), new Date(at - sweepGraceMs), WEBHOOK_SWEEP_PAGE);
            // More may be waiting (a backlog after an outage): not a minute per page.
            return found === WEBHOOK_SWEEP_PAGE && queued > 0;
          },
        },
      ],
      onError: opts.onError ?? (() => undefined),
    });
  }

  get holder(): string {
    return this.#queue.holder;
  }

  /** Starts polling; an event queued by this instance's WebhookDelivery (its onQueued calls kick) is sent at once. */
  start(): void {
    this.#queue.start();
  }

  /** Looks for due deliveries now (nothing before start()). */
  kick(): void {
    this.#queue.kick();
  }

  /** Attempts under way now. */
  get active(): number {
    return this.#queue.size;
  }

  /** Stops polling, aborts attempts under way (their claims are given back, unrecorded) and waits for them. */
  close(): Promise<void> {
    return this.#queue.close();
  }
}
