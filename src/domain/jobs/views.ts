import type { JobItemBatch, JobRecord, JobRepository } from './repository.js';
import { resultPiecesRead, resultTextOf } from './items.js';
import type { JobOperations } from './operations.js';
import type { JobError, JobView, WebhookAttemptView } from './types.js';

/**
 * Item batches fetched per query by streams and views. A batch holds at least one item, so a job
 * of up to this many items is one read; a bigger one (a 65535-port scan as a job) is read a page
 * after another until a page comes back short (allItemBatches, and the streams' own loop).
 */
export const JOB_ITEMS_PAGE = 1000;

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

  constructor(deps: JobViewsDeps) {
    this.#d = deps;
  }

  /** The job as the API shows it. */
  async view(row: JobRecord): Promise<JobView> {
    return this.#view(row, JSON.parse(await this.resultText(row)) as unknown);
  }

  /**
   * `view` as JSON text, for a stream's last line: a finished job's result goes in as stored
   * (the synchronous answer's text, or its items' texts), not parsed to be written again. In
   * pieces to be written one after the other, its items read a few batches at a time
   * (resultPiecesRead): a 65535-port result is 13 MB of text, which joined into one string (and
   * copied into one buffer on its way out) held some 26 MB more at once.
   */
  async viewText(row: JobRecord): Promise<[string, Iterable<string> | AsyncIterable<string>, string]> {
    const stored = this.#stored(row);
    const result = stored !== undefined ? [stored] : resultPiecesRead((after, limit) => this.#d.repo.itemBatches(row.id, after, limit));
    const { result: _none, ...rest } = await this.#view(row, null);
    return [`${JSON.stringify(rest).slice(0, -1)},"result":`, result, '}'];
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
