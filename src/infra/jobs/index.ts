import type { Config } from '../../config.js';
import type { Store } from '../../domain/store.js';
import { EmbeddedJobQueue } from './embedded.js';
import type { JobQueue } from '../../domain/jobs/queue.js';

export { EmbeddedJobQueue } from './embedded.js';

/** BullMQ (and ioredis under it) only where REDIS_URL asks for it: loading it is half a second of a process's start. */
const bullMq = () => import('./bullmq.js');

export interface JobQueueOptions {
  onError: (err: unknown) => void;
  /** Expected recoveries (a job run again after its worker paused past its lock): below error level. */
  onRecovered?: (err: unknown) => void;
  /** Redis lost ('lost') or back ('back'): expected, below error level (BullMQ only). */
  onRedis?: (state: 'lost' | 'back', err?: unknown) => void;
  /** The reason a cancelled job's run is aborted with. */
  cancelReason: () => Error;
  /** BullMQ's queue name and key prefix (tests: one of their own). */
  bullmq?: { name?: string; prefix?: string };
  /** How often a running job renews its lease (JOB_LEASE_RENEW_MS unless given; tests: less). */
  renewMs?: number;
}

/**
 * The job engine for the configuration: BullMQ on REDIS_URL when it is set (any number of API
 * instances and `netdiag worker` processes share it), the embedded queue otherwise; either way
 * NETDIAG_WORKERS jobs at once in this process, and job state in the database.
 */
export async function createJobQueue(config: Pick<Config, 'redisUrl' | 'workers'>, store: Pick<Store, 'jobs'>, opts: JobQueueOptions): Promise<JobQueue> {
  if (config.redisUrl === undefined) {
    return new EmbeddedJobQueue(store.jobs, { workers: config.workers, cancelReason: opts.cancelReason, onError: opts.onError, renewMs: opts.renewMs });
  }
  const { BullMqJobQueue } = await bullMq();
  return new BullMqJobQueue({
    redisUrl: config.redisUrl,
    repo: store.jobs,
    workers: config.workers,
    cancelReason: opts.cancelReason,
    onError: opts.onError,
    renewMs: opts.renewMs,
    ...(opts.onRecovered ? { onRecovered: opts.onRecovered } : {}),
    ...(opts.onRedis ? { onRedis: opts.onRedis } : {}),
    ...opts.bullmq,
  });
}

/**
 * Runs `suspend` (`netdiag account suspend`: a process that runs no queue) so that, with
 * REDIS_URL, the ids of the jobs it cancels are published as a DELETE publishes them, and the
 * processes running them abort at once; without Redis (or should Redis not answer) they stop at
 * their next lease renewal. `suspend` is given the publisher to build its AccountService with
 * (undefined without Redis).
 */
export async function cancelsPublished<T>(
  config: Pick<Config, 'redisUrl'>,
  store: Pick<Store, 'jobs'>,
  suspend: (onJobsCancelled: ((ids: readonly string[]) => Promise<void>) | undefined) => Promise<T>,
  bullmq: JobQueueOptions['bullmq'] = {},
): Promise<T> {
  if (config.redisUrl === undefined) return suspend(undefined);
  // Failures are the lease renewal's to make up for: nothing to report from here.
  const { BullMqJobQueue } = await bullMq();
  const queue = new BullMqJobQueue({ redisUrl: config.redisUrl, repo: store.jobs, workers: 0, onError: () => undefined, ...bullmq });
  await queue.connected();
  try {
    // All at once (JobService.stopped): with Redis slow, one after another would wait each timeout in sequence.
    return await suspend(async (ids) => {
      await Promise.all(ids.map((id) => queue.cancel(id)));
    });
  } finally {
    await queue.close();
  }
}
