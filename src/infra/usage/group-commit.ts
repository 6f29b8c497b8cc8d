import type { UsageRecord, UsageRepository } from '../store/store.js';

/** A batch is written at once when it reaches this size, without waiting for the next turn. */
export const GROUP_COMMIT_MAX_BATCH = 512;

/** Called once a record's batch is in the store (null), or with the error that kept it out. */
export type RecordedCallback = (err: Error | null) => void;

/**
 * Group commit for usage records: every request's record joins the open batch, the batch is
 * written in one transaction on the next turn of the event loop, and each request's callback
 * (or promise) is answered only then. A response waits for its record, so a response that was sent is in the
 * store even after kill -9, while the database sees one transaction per turn, not per request.
 */
export class GroupCommitRecorder {
  private records: UsageRecord[] = [];
  private callbacks: RecordedCallback[] = [];
  private scheduled = false;
  private inFlight: Promise<void> = Promise.resolve();
  private readonly flushSoon = () => this.flush();

  constructor(private readonly usage: UsageRepository) {}

  record(record: UsageRecord): Promise<void> {
    return new Promise<void>((resolve, reject) => this.add(record, (err) => (err ? reject(err) : resolve())));
  }

  /**
   * `record` for the request hot path, without a promise per request: `done` is called once the
   * batch holding the record is in the store, or with the error that kept it out.
   */
  add(record: UsageRecord, done: RecordedCallback): void {
    this.records.push(record);
    this.callbacks.push(done);
    if (this.records.length >= GROUP_COMMIT_MAX_BATCH) this.flush();
    else if (!this.scheduled) {
      this.scheduled = true;
      setImmediate(this.flushSoon);
    }
  }

  private flush(): void {
    this.scheduled = false;
    const records = this.records;
    const callbacks = this.callbacks;
    if (records.length === 0) return;
    this.records = [];
    this.callbacks = [];
    // Batches are written one after another, never interleaved.
    this.inFlight = this.inFlight.then(async () => {
      let failure: Error | null = null;
      try {
        await this.usage.record(records);
      } catch (err) {
        failure = err instanceof Error ? err : new Error(`usage write failed: ${String(err)}`);
      }
      for (const done of callbacks) done(failure);
    });
  }

  /** Writes what is pending; called on shutdown before the store closes. */
  async drain(): Promise<void> {
    this.flush();
    await this.inFlight;
  }
}
