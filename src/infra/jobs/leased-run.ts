import type { JobRecord, JobRepository } from '../store/jobs.js';
import type { JobRunner } from './queue.js';

/** Why a run was aborted: the process is closing (its job goes back to the queue). */
export class QueueClosingError extends Error {
  constructor() {
    super('the server is shutting down; the job will run again');
    this.name = 'QueueClosingError';
  }
}

/** Why a run was aborted: its lease was lost (cancelled or taken over elsewhere). */
export class LeaseLostError extends Error {
  constructor() {
    super('the job is no longer held by this process');
    this.name = 'LeaseLostError';
  }
}

/** A job running in this process: how to stop it, and when it has stopped. */
export interface LeasedRun {
  abort: AbortController;
  done: Promise<void>;
}

/**
 * Runs a claimed job the way every queue does: its database lease renewed every `renewMs` (a
 * renewal that finds the job no longer ours, cancelled or taken over, aborts the run), its
 * account's slot released at the end, and, when the queue is closing, the job given back to the
 * database so another process takes it at once. The run is in `running` while it lasts.
 */
export function startLeasedRun(o: {
  repo: JobRepository;
  runner: JobRunner;
  owner: string;
  leaseMs: number;
  renewMs: number;
  job: JobRecord;
  release: () => void;
  running: Map<string, LeasedRun>;
  onError: (err: unknown) => void;
  /** After the run is over and out of `running` (the embedded queue looks for more work). */
  after?: () => void;
}): LeasedRun {
  const abort = new AbortController();
  const renew = setInterval(() => {
    o.repo.renew(o.job.id, o.owner, Date.now() + o.leaseMs).then(
      (held) => {
        if (!held && !abort.signal.aborted) abort.abort(new LeaseLostError());
      },
      (err: unknown) => o.onError(err),
    );
  }, o.renewMs);
  renew.unref();
  const done = (async () => {
    try {
      await o.runner.run(o.job, o.owner, abort.signal);
    } catch (err) {
      o.onError(err);
    } finally {
      clearInterval(renew);
      o.release();
      if (abort.signal.reason instanceof QueueClosingError) {
        await o.repo.release(o.job.id, o.owner).catch((err: unknown) => o.onError(err));
      }
      o.running.delete(o.job.id);
      o.after?.();
    }
  })();
  const run = { abort, done };
  o.running.set(o.job.id, run);
  return run;
}
