import type { Store } from '../../../src/domain/store.js';
import { JobService, type JobOperation } from '../../../src/domain/jobs/service.js';
import type { JobError } from '../../../src/domain/jobs/types.js';
import type { JobQueue } from '../../../src/domain/jobs/queue.js';

/**
 * A JobService over a real store for tests that call `run` themselves: a queue that never runs
 * anything, every endpoint the one operation `op`, slots always free, errors as their message.
 */
const idleQueue: JobQueue = { enqueue: async () => undefined, start: () => undefined, cancel: async () => undefined, close: async () => undefined };
export const errorBody = (err: unknown): JobError => ({ success: false, error: 'internal_error', message: err instanceof Error ? err.message : String(err) });

export function jobServiceFor(store: Store, op: JobOperation): JobService {
  return new JobService({
    repo: store.jobs,
    queue: idleQueue,
    operations: () => op,
    errorBody,
    slots: { tryAcquire: async () => () => undefined, close: async () => undefined },
    inFlightLimit: () => 8,
    ownerKey: (id) => `a:${id}`,
    ttlDays: 7,
  });
}
