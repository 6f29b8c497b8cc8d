import { LRUCache } from 'lru-cache';
import type { JobItemBatch, JobRecord, JobRepository } from './repository.js';
import { SharedBatches, batchesRead, itemOrder, itemsOf, resultItemsRead, resultPiecesRead, resultTextOf, type HeldBatch, type JobItemRecord } from './items.js';
import { FINISHED_STATUSES } from './types.js';
import type { JobOperations } from './operations.js';
import type { JobError, JobView, WebhookAttemptView } from './types.js';

/**
 * Item batches fetched per query by streams and views. A batch holds at least one item, so a job
 * of up to this many items is one read; a bigger one (a 65535-port scan as a job) is read a page
 * after another until a page comes back short (allItemBatches, and the streams' own loop).
 */
export const JOB_ITEMS_PAGE = 1000;

/**
 * Finished jobs whose item order (itemOrder: the seq at each index, 4 bytes an item) JobViews
 * keeps, the last read first: ten readers of one full-range result at once share one pass over
 * its 13 MB of batches for it instead of making ten (256 KB kept per such job).
 */
export const ITEM_ORDERS_KEPT = 16;

/** Every item batch of a job, in seq order, JOB_ITEMS_PAGE batches a read. */
export async function allItemBatches(repo: Pick<JobRepository, 'itemBatches'>, jobId: string): Promise<JobItemBatch[]> {
  const all: JobItemBatch[] = [];
  for (let after = 0; ; ) {
    const page = await repo.itemBatches(jobId, after, JOB_ITEMS_PAGE);
    all.push(...page);
    if (page.length < JOB_ITEMS_PAGE) return all;
    after = page[page.length - 1]!.last_seq;
  }
}

/** A job as JSON text in three parts: `head` + the pieces of `result` + `tail`. */
export interface JobViewText {
  head: string;
  result: Iterable<string> | AsyncIterable<string>;
  tail: string;
  /**
   * What identifies this text without reading the result: the same for the same text, another
   * when anything shown changed (an ETag is made of it).
   */
  version: string;
}

/** A job row as the API shows it, with its `result` (parsed, or the items so far), without webhook attempts. */
export function jobViewOf(row: JobRecord, result: unknown): JobView {
  return {
    id: row.id,
    endpoint: row.endpoint,
    status: row.status,
    progress: { done: row.progress_done, total: row.progress_total },
    created_at: row.created_at,
    started_at: row.started_at,
    finished_at: row.finished_at,
    result,
    error: row.error === null ? null : (JSON.parse(row.error) as JobError),
    webhook_url: row.webhook_url,
  };
}

export interface JobViewsDeps {
  repo: Pick<JobRepository, 'itemBatches'>;
  /** Which endpoints are bulk or range calls (their result is their items). */
  operations: JobOperations;
  /** A job's webhook delivery attempts; without it a view shows none. */
  attemptsOf?: ((jobId: string) => Promise<WebhookAttemptView[]>) | undefined;
}

/**
 * Jobs as the API shows them. Apart from the job service so that whatever the service tells of
 * a job (webhook delivery, building an event after the fact) can be built before it and still
 * show the job exactly as the API does.
 */
export class JobViews {
  readonly #d: JobViewsDeps;
  readonly #orders = new LRUCache<string, { version: string; order: Promise<Int32Array> }>({ max: ITEM_ORDERS_KEPT });
  readonly #shared = new SharedBatches();

  constructor(deps: JobViewsDeps) {
    this.#d = deps;
  }

  /** The job as the API shows it. */
  async view(row: JobRecord): Promise<JobView> {
    return this.#view(row, JSON.parse(await this.resultText(row)) as unknown);
  }

  /**
   * `view` as JSON text, for a stream's last line and the JSON answers: a finished job's result
   * goes in as stored (the synchronous answer's text, or its items' texts), not parsed to be
   * written again. In pieces to be written one after the other, its items read a few batches at a
   * time, an iteration of the event loop each (resultPiecesRead): a 65535-port result is 13 MB of text,
   * which built whole for each reader held the server for everyone (ten readers: seconds). Nothing
   * of the result is read until `result` is iterated, nor after `signal` aborted.
   */
  async viewText(row: JobRecord, signal?: AbortSignal): Promise<JobViewText> {
    const stored = this.#stored(row);
    const result = stored !== undefined ? [stored] : resultPiecesRead(this.#read(row, signal), this.#order(row, signal), this.#batchAt(row, signal));
    const { result: _none, ...rest } = await this.#view(row, null);
    const head = `${JSON.stringify(rest).slice(0, -1)},"result":`;
    // The result is what the row says it is: a stored text is written once, with the outcome
    // (status, finished_at); items come with the progress that counts them, and a run started
    // again (attempts) starts them over.
    return { head, result, tail: '}', version: `${head}${row.attempts}` };
  }

  /**
   * The job as the API shows it with at most `max` items of its result (the first in input
   * order), for a page a person reads; `shown` of `total` items are in it. A result that is not
   * items is whole (shown = total = 1).
   */
  async viewPart(row: JobRecord, max: number): Promise<{ view: JobView; shown: number; total: number }> {
    const stored = this.#stored(row);
    if (stored !== undefined) return { view: await this.#view(row, JSON.parse(stored) as unknown), shown: 1, total: 1 };
    // None asked for: nothing is read (the first piece would need the order of them all).
    if (max <= 0) return { view: await this.#view(row, []), shown: 0, total: row.progress_done };
    const texts: string[] = [];
    for await (const piece of this.resultItems(row)!) {
      texts.push(...piece.slice(0, max - texts.length));
      if (texts.length >= max) break;
    }
    return { view: await this.#view(row, JSON.parse(`[${texts.join(',')}]`) as unknown), shown: texts.length, total: Math.max(texts.length, row.progress_done) };
  }

  /** The result's item texts in input order, a piece at a time (resultItemsRead); null when the result is not items. */
  resultItems(row: JobRecord, signal?: AbortSignal): AsyncIterable<string[]> | null {
    if (this.#stored(row) !== undefined) return null;
    return resultItemsRead(this.#read(row, signal), this.#order(row, signal), this.#batchAt(row, signal));
  }

  /** The job's items in the order they completed, a few batches at a time (batchesRead). */
  async *itemsBySeq(row: JobRecord, signal?: AbortSignal): AsyncGenerator<JobItemRecord[]> {
    for await (const page of batchesRead(this.#read(row, signal))) yield itemsOf(page);
  }

  /** Whether jobs of `endpoint` are bulk or range calls, whose result is their items. */
  hasItems(endpoint: string): boolean {
    return this.#d.operations(endpoint)?.items !== undefined;
  }

  /**
   * The job's `result` as JSON text: the stored text; else, for a bulk or range call, its items
   * (so far) in input order, which is its result once it succeeded (RESULT_IS_ITEMS); else null.
   */
  async resultText(row: JobRecord): Promise<string> {
    return this.#stored(row) ?? resultTextOf(await allItemBatches(this.#d.repo, row.id));
  }

  /** The job's batches; once `signal` has aborted (the reader's client went away), a rejection instead of another read. */
  #read(row: JobRecord, signal?: AbortSignal): (afterSeq: number, limit: number) => Promise<JobItemBatch[]> {
    return async (after, limit) => {
      signal?.throwIfAborted();
      return this.#d.repo.itemBatches(row.id, after, limit);
    };
  }

  /** The batch holding an item, shared with other readers when the job has finished (SharedBatches); none once `signal` aborted. */
  #batchAt(row: JobRecord, signal?: AbortSignal): ((seq: number) => Promise<HeldBatch>) | undefined {
    if (!FINISHED_STATUSES.has(row.status)) return undefined;
    const key = `${row.id} ${row.attempts}`;
    return async (seq) => {
      signal?.throwIfAborted();
      // Read without the signal: one reader's going away does not fail the read for the others.
      return this.#shared.at(key, seq, this.#read(row));
    };
  }

  /** The job's item order, shared while kept when the job has finished (its items no longer change); read anew for a running job. */
  #order(row: JobRecord, signal?: AbortSignal): () => Promise<Int32Array> {
    return () => {
      if (!FINISHED_STATUSES.has(row.status)) return itemOrder(this.#read(row, signal));
      const version = `${row.attempts} ${row.finished_at} ${row.progress_done}`;
      const kept = this.#orders.get(row.id);
      if (kept && kept.version === version) return kept.order;
      // Shared: one reader's going away does not stop it for the others.
      const order = itemOrder(this.#read(row));
      // A failed read is not kept: the next reader reads again.
      order.catch(() => {
        if (this.#orders.peek(row.id)?.order === order) this.#orders.delete(row.id);
      });
      this.#orders.set(row.id, { version, order });
      return order;
    };
  }

  /** The result's text when no item is to be read for it (stored, or null for a call without items); undefined when it is the items. */
  #stored(row: JobRecord): string | undefined {
    if (row.result !== null) return row.result;
    return this.hasItems(row.endpoint) ? undefined : 'null';
  }

  async #view(row: JobRecord, result: unknown): Promise<JobView> {
    const view = jobViewOf(row, result);
    if (row.webhook_url !== null && this.#d.attemptsOf) {
      const attempts = await this.#d.attemptsOf(row.id);
      if (attempts.length > 0) view.webhook_deliveries = attempts;
    }
    return view;
  }
}
