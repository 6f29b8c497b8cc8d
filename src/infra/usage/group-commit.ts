import type { UsageRecord, UsageRepository } from '../store/store.js';

/** A batch is written at once when it reaches this size, without waiting for the next turn. */
export const GROUP_COMMIT_MAX_BATCH = 512;

/**
 * Group commit for usage records: every request's record joins the open batch, the batch is
 * written in one transaction on the next turn of the event loop, and each request's promise
 * resolves only then. A response waits for its record, so a response that was sent is in the
 * store even after kill -9, while the database sees one transaction per turn, not per request.
 */
export class GroupCommitRecorder {
  private batch: Array<{ record: UsageRecord; done: () => void; fail: (err: unknown) => void }> = [];
  private scheduled = false;
  private inFlight: Promise<void> = Promise.resolve();

  constructor(private readonly usage: UsageRepository) {}

  record(record: UsageRecord): Promise<void> {
    return new Promise<void>((done, fail) => {
      this.batch.push({ record, done, fail });
      if (this.batch.length >= GROUP_COMMIT_MAX_BATCH) this.flush();
      else if (!this.scheduled) {
        this.scheduled = true;
        setImmediate(() => this.flush());
      }
    });
  }

  private flush(): void {
    this.scheduled = false;
    const batch = this.batch;
    if (batch.length === 0) return;
    this.batch = [];
    // Batches are written one after another, never interleaved.
    this.inFlight = this.inFlight.then(async () => {
      try {
        await this.usage.record(batch.map((b) => b.record));
        for (const b of batch) b.done();
      } catch (err) {
        for (const b of batch) b.fail(err);
      }
    });
  }

  /** Writes what is pending; called on shutdown before the store closes. */
  async drain(): Promise<void> {
    this.flush();
    await this.inFlight;
  }
}
