import type { Clock } from '../../domain/accounts/service.js';
import { WebhookDelivery } from '../../domain/webhooks/delivery.js';
import type { WebhookSecrets } from '../../domain/webhooks/secrets.js';
import type { Dialer } from '../net/dialer.js';
import type { Store } from '../../domain/store.js';
import { EmbeddedWebhookQueue, type EmbeddedWebhookQueueOptions } from './queue.js';
import { DialerWebhookTransport, type DialerWebhookTransportOptions } from './sender.js';

export { EmbeddedWebhookQueue } from './queue.js';
export { DialerWebhookTransport } from './sender.js';

/** What tests (and a worker) may change: the schedule in milliseconds, a short timeout, a fast poll. */
export interface WebhookTuning extends DialerWebhookTransportOptions, Pick<EmbeddedWebhookQueueOptions, 'pollMs' | 'leaseMs' | 'concurrency' | 'perAccount' | 'owner' | 'keepMs' | 'sweepMs' | 'sweepWindowMs' | 'sweepGraceMs'> {
  retryDelaysMs?: readonly number[];
  timeoutMs?: number;
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
}): Webhooks {
  const t = opts.tuning ?? {};
  const delivery = new WebhookDelivery({
    store: opts.store,
    secrets: opts.secrets,
    transport: new DialerWebhookTransport(opts.dialer, t.ca !== undefined ? { ca: t.ca } : {}),
    ...(opts.clock ? { clock: opts.clock } : {}),
    ...(t.retryDelaysMs ? { retryDelaysMs: t.retryDelaysMs } : {}),
    ...(t.timeoutMs !== undefined ? { timeoutMs: t.timeoutMs } : {}),
    ...(opts.onError ? { onError: opts.onError } : {}),
  });
  const queue = new EmbeddedWebhookQueue({
    deliveries: opts.store.webhookDeliveries,
    delivery,
    ...(t.pollMs !== undefined ? { pollMs: t.pollMs } : {}),
    ...(t.leaseMs !== undefined ? { leaseMs: t.leaseMs } : {}),
    ...(t.concurrency !== undefined ? { concurrency: t.concurrency } : {}),
    ...(t.perAccount !== undefined ? { perAccount: t.perAccount } : {}),
    ...(t.owner !== undefined ? { owner: t.owner } : {}),
    ...(t.keepMs !== undefined ? { keepMs: t.keepMs } : {}),
    ...(t.sweepMs !== undefined ? { sweepMs: t.sweepMs } : {}),
    ...(t.sweepWindowMs !== undefined ? { sweepWindowMs: t.sweepWindowMs } : {}),
    ...(t.sweepGraceMs !== undefined ? { sweepGraceMs: t.sweepGraceMs } : {}),
    ...(opts.onError ? { onError: opts.onError } : {}),
  });
  if (opts.start !== false) queue.start();
  return { delivery, queue };
}
