import type { JobItemBatch } from './repository.js';
import { ItemBatcher } from './items.js';

/** How long a completed item waits for others to be written with it. */
export const JOB_ITEM_FLUSH_MS = 20;

/**
 * A run's items on their way to the database: an item waits JOB_ITEM_FLUSH_MS for those completing
 * with it, then they are written as one batch (one write per item, a synchronous one on SQLite,
 * would cost a 1000-port scan more than the scan itself); whatever completed while a write was in
 * flight goes in the next. After a failed write nothing more is written (a later batch would leave
 * a gap in the seqs).
 */
export class ItemWriter {
  readonly #batcher: ItemBatcher;
  readonly #write: (batch: JobItemBatch) => Promise<void>;
  #timer: NodeJS.Timeout | undefined;
  #writing: Promise<void> | null = null;
  #written: number;
  #error: unknown = null;
  #ending = false;

  /** `lastSeq`: the seq of the last item already stored (a job run again goes on after it). */
  constructor(write: (batch: JobItemBatch) => Promise<void>, lastSeq = 0) {
    this.#write = write;
    this.#batcher = new ItemBatcher(lastSeq);
    this.#written = lastSeq;
  }

  /** The seq of the last item written (the stored last seq before the first write). */
  get written(): number {
    return this.#written;
  }

  add(index: number, text: () => string): void {
    this.#batcher.add(index, text);
    if (this.#writing !== null || this.#timer !== undefined || this.#ending) return;
    this.#timer = setTimeout(() => {
      this.#timer = undefined;
      this.#writing = this.#drain();
    }, JOB_ITEM_FLUSH_MS);
  }

  async #drain(): Promise<void> {
    try {
      for (let batch = this.#next(); batch !== null; batch = this.#next()) {
        await this.#write(batch);
        this.#written = batch.last_seq;
      }
    } catch (err) {
      this.#error = err;
    }
    this.#writing = null;
  }

  #next(): JobItemBatch | null {
    return this.#ending || this.#error !== null ? null : this.#batcher.take();
  }

  /**
   * The run is over: waits for a write in flight and returns the items not written yet, as one
   * batch for the job's last write (null when there are none). Throws what a write threw, and
   * ItemTextError for an item that could not be written as JSON.
   */
  async end(): Promise<JobItemBatch | null> {
    this.#ending = true;
    clearTimeout(this.#timer);
    this.#timer = undefined;
    await this.#writing;
    if (this.#error !== null) throw this.#error;
    return this.#batcher.take();
  }
}
