/**
 * What the job service runs, as the domain sees it: an operation per endpoint that takes a
 * job's body and gives back the synchronous call's `data` as JSON text. Where the operations are
 * declared (src/operations/) and how they are served over HTTP is not the domain's business.
 */

/**
 * What a bulk or range call's run returns when its `data` is exactly the items it reported, each
 * once: the job's result is then those items in input order, already stored with the job, and is
 * not written a second time.
 */
export const RESULT_IS_ITEMS: unique symbol = Symbol('the result is the items in input order');

/** Item indexes (their places in `data`): a job's items already stored, which a run again skips. */
export interface ItemSet {
  has(index: number): boolean;
  readonly size: number;
}

/** What the service runs for an endpoint. */
export interface JobOperation {
  /** Bulk and range calls: the number of items; undefined for a call with one answer. */
  items: ((body: unknown) => number) | undefined;
  /**
   * A run again does not probe the items stored before (`done`): the job may give its turn back
   * between batches. A call that would run them all again keeps its turn to its end (given back
   * at every turn, it could be made to start over for ever).
   */
  skipsDone?: boolean;
  /**
   * `items` is a bound, not the count (a traceroute's hops, at most max_hops): a job that
   * succeeds has as many as it reported, and its progress says that many of that many.
   */
  itemsAtMost?: boolean;
  /**
   * The synchronous call's `data` as the JSON text its answer would hold; each item of a bulk or
   * range call, as it completes, through `onItem`: its place in `data`, and its JSON text when
   * asked for (written then, once, not in the middle of the probe). `done`: the items a
   * previous run of the job stored; they are not reported again (nor probed, where the call can
   * skip them), and a result that is the items is RESULT_IS_ITEMS with them.
   */
  run(body: unknown, ctx: { signal: AbortSignal; onItem?: (index: number, json: () => string) => void; done?: ItemSet }): Promise<string | typeof RESULT_IS_ITEMS>;
}

/** The operation a job of `endpoint` runs; undefined for an endpoint that has none. */
export type JobOperations = (endpoint: string) => JobOperation | undefined;
