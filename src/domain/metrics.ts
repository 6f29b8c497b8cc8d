/**
 * What the domain tells the operator's metrics (GET /metrics) about its work. The domain only
 * declares it; the infra layer's metrics module implements it with prom-client, and NO_METRICS
 * does nothing (NETDIAG_METRICS_TOKEN unset, tests, the worker).
 *
 * Every label value passed here comes from a small fixed set (an operation's tool name, an error
 * code, an outcome below), never from a request, so the number of series stays bounded.
 */

/** What became of one webhook attempt: answered 2xx, to be tried again, or given up (410 or the last retry). */
export type WebhookAttemptResult = 'delivered' | 'retrying' | 'failed';

export interface Metrics {
  /**
   * One run of an operation (a tool), synchronous or as a job: `outcome` is `ok` when it answered
   * (a closed port or an NXDOMAIN is an answer), `cancelled` when it was aborted, else the error
   * code it failed with (`target_forbidden`, `internal_error`, ...).
   */
  probe(tool: string, outcome: string): void;
  /** One webhook attempt, recorded with what follows it. */
  webhookAttempt(result: WebhookAttemptResult): void;
}

/** Counts nothing. */
export const NO_METRICS: Metrics = {
  probe() {},
  webhookAttempt() {},
};
