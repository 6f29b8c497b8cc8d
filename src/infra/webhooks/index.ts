import type { Clock } from '../../domain/accounts/service.js';
import type { JobView } from '../../domain/jobs/types.js';
import { WebhookDelivery } from '../../domain/webhooks/delivery.js';
import type { WebhookSecrets } from '../../domain/webhooks/secrets.js';
import type { Dialer } from '../net/dialer.js';
import type { JobRecord } from '../../domain/jobs/repository.js';
import type { Store } from '../../domain/store.js';
import type { Metrics } from '../../domain/metrics.js';
import { EmbeddedWebhookQueue, type EmbeddedWebhookQueueOptions } from './queue.js';
import { DialerWebhookTransport, type DialerWebhookTransportOptions } from './sender.js';

export { EmbeddedWebhookQueue } from './queue.js';
export { DialerWebhookTransport } from './sender.js';

/** What tests (and a worker) may change: the schedule in milliseconds, a short timeout, a fast poll, the jitter's source. */
export interface WebhookTuning extends DialerWebhookTransportOptions, Pick<EmbeddedWebhookQueueOptions, 'pollMs' | 'leaseMs' | 'concurrency' | 'perAccount' | 'holder' | 'keepMs' | 'sweepMs' | 'sweepWindowMs' | 'sweepGraceMs'> {
  retryDelaysMs?: readonly number[];
  timeoutMs?: number;
  random?: () => number;
}

export interface Webhooks {
  /** The JobWebhooks the job engine calls. */
  delivery: WebhookDelivery;
  queue: EmbeddedWebhookQueue;
}

/**
 * Delivery over the one dialer, with its queue in the database; started unless `start` is false
 * (the app starts it once everything it uses is wired), so every process that builds it (API
 * instance or worker) sends due deliveries. Close the queue on shutdown.
 */
export function createWebhooks(opts: {
  store: Store;
  dialer: Dialer;
  secrets: WebhookSecrets;
  clock?: Clock;
  tuning?: WebhookTuning;
  onError?: (err: unknown) => void;
  start?: boolean;
  /** How a job's view is built for an event queued after the fact (the sweep); rowView unless given. */
  viewOf?: (row: JobRecord) => Promise<JobView>;
  /** Told of every recorded attempt (netdiag_webhook_deliveries_total). */
  metrics?: Metrics;
}): Webhooks {
  const t = opts.tuning ?? {};
  const delivery = new WebhookDelivery({
    // An event queued by this instance is sent at once (the queue ignores it until started).
    onQueued: () => queue.kick(),
    ...(opts.viewOf ? { viewOf: opts.viewOf } : {}),
    store: opts.store,
    secrets: opts.secrets,
    transport: new DialerWebhookTransport(opts.dialer, t.ca !== undefined ? { ca: t.ca } : {}),
    ...(opts.clock ? { clock: opts.clock } : {}),
    ...(t.retryDelaysMs ? { retryDelaysMs: t.retryDelaysMs } : {}),
    ...(t.timeoutMs !== undefined ? { timeoutMs: t.timeoutMs } : {}),
    ...(t.random ? { random: t.random } : {}),
    ...(opts.onError ? { onError: opts.onError } : {}),
    ...(opts.metrics ? { metrics: opts.metrics } : {}),
  });
  const queue = new EmbeddedWebhookQueue({
    deliveries: opts.store.webhookDeliveries,
    delivery,
    // One clock for the schedule and the claims: a test that moves it sees a retry fall due.
    ...(opts.clock ? { now: () => opts.clock!().getTime() } : {}),
    ...(t.pollMs !== undefined ? { pollMs: t.pollMs } : {}),
    ...(t.leaseMs !== undefined ? { leaseMs: t.leaseMs } : {}),
    ...(t.concurrency !== undefined ? { concurrency: t.concurrency } : {}),
    ...(t.perAccount !== undefined ? { perAccount: t.perAccount } : {}),
    ...(t.holder !== undefined ? { holder: t.holder } : {}),
    ...(t.keepMs !== undefined ? { keepMs: t.keepMs } : {}),
    ...(t.sweepMs !== undefined ? { sweepMs: t.sweepMs } : {}),
    ...(t.sweepWindowMs !== undefined ? { sweepWindowMs: t.sweepWindowMs } : {}),
    ...(t.sweepGraceMs !== undefined ? { sweepGraceMs: t.sweepGraceMs } : {}),
    ...(opts.onError ? { onError: opts.onError } : {}),
  });
  if (opts.start !== false) queue.start();
  return { delivery, queue };
}
