import { Counter, Gauge, Histogram, Registry, collectDefaultMetrics } from 'prom-client';
import type { JobStatus } from '../../domain/jobs/types.js';
import type { Metrics, WebhookAttemptResult } from '../../domain/metrics.js';

/**
 * The operator's metrics (GET /metrics, docs/operations.md) with prom-client: the domain's
 * Metrics (probes, webhook attempts) and the HTTP layer's (requests, their durations, 429s) in
 * one Registry per instance, so that every app a test process builds counts on its own and
 * nothing lands in prom-client's global registry. The process metrics (CPU, memory, event loop,
 * GC) are the process's, not an app's: they are collected once per process, in a registry of
 * their own, and merged in at each scrape.
 */

/** Request durations in seconds: from a cache hit to a 30 s scan and beyond. */
export const DURATION_BUCKETS_S = [0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60];

/**
 * netdiag_jobs counts each status up to this many: a scrape reads at most this many index
 * entries per status, however many finished jobs are kept (NETDIAG_JOB_TTL_DAYS). Measured on
 * SQLite: an uncapped count of 1 M jobs held the event loop 200-360 ms, 100 k jobs 16-31 ms.
 */
export const JOBS_COUNT_CAP = 10_000;

/** The windows a 429 names (details.window, ErrorBody's schema); anything else is counted as `other`. */
const WINDOWS = new Set(['minute', 'hour', 'day', 'concurrent', 'job_reads']);

let processRegistry: Registry | undefined;

/**
 * prom-client's default gauges whose names end in `_total`, which Prometheus keeps for counters
 * (`promtool check metrics` fails on them, exit 3). Each is the sum over `type` of the gauge of the
 * same name without `_total` (nodejs_active_handles{type}, ...), which stays: no figure is lost.
 */
export const GAUGES_NAMED_AS_COUNTERS = ['nodejs_active_handles_total', 'nodejs_active_requests_total', 'nodejs_active_resources_total'];

/** Node's and the process's default metrics, registered once per process whatever the number of apps. */
function processMetrics(): Registry {
  if (!processRegistry) {
    processRegistry = new Registry();
    collectDefaultMetrics({ register: processRegistry });
    for (const name of GAUGES_NAMED_AS_COUNTERS) processRegistry.removeSingleMetric(name);
  }
  return processRegistry;
}

export interface PrometheusMetricsOptions {
  /** The jobs in each status, up to `cap`, asked at each scrape (JobRepository.countByStatus). */
  countJobs: (cap: number) => Promise<Record<JobStatus, number>>;
  /** Where a failed job count goes (the scrape still answers, without netdiag_jobs). */
  onError?: (err: unknown) => void;
}

export class PrometheusMetrics implements Metrics {
  readonly registry = new Registry();
  readonly #requests: Counter<'route' | 'method' | 'status'>;
  readonly #durations: Histogram<'route' | 'method'>;
  readonly #probes: Counter<'tool' | 'outcome'>;
  readonly #webhooks: Counter<'outcome'>;
  readonly #rateLimited: Counter<'window'>;

  constructor(opts: PrometheusMetricsOptions) {
    const registers = [this.registry];
    this.#requests = new Counter({
      name: 'netdiag_http_requests_total',
      help: 'HTTP requests answered, by route template (unmatched: no route), method and status.',
      labelNames: ['route', 'method', 'status'],
      registers,
    });
    this.#durations = new Histogram({
      name: 'netdiag_http_request_duration_seconds',
      help: 'Time from a request to its answer, by route template and method.',
      labelNames: ['route', 'method'],
      buckets: DURATION_BUCKETS_S,
      registers,
    });
    this.#probes = new Counter({
      name: 'netdiag_probes_total',
      help: 'Runs of each tool (synchronous or as a job): ok, cancelled, or the error code it failed with.',
      labelNames: ['tool', 'outcome'],
      registers,
    });
    this.#webhooks = new Counter({
      name: 'netdiag_webhook_deliveries_total',
      help: 'Webhook delivery attempts: delivered (2xx), retrying (to be tried again), failed (given up).',
      labelNames: ['outcome'],
      registers,
    });
    this.#rateLimited = new Counter({
      name: 'netdiag_rate_limited_total',
      help: 'Requests refused with 429, by the window that was full (minute, hour, day, concurrent, job_reads).',
      labelNames: ['window'],
      registers,
    });
    const { countJobs, onError } = opts;
    new Gauge({
      name: 'netdiag_jobs',
      help: `Jobs in the database by status (every instance and worker sharing it), counted at scrape time up to ${JOBS_COUNT_CAP}.`,
      labelNames: ['status'],
      registers,
      async collect() {
        try {
          const counts = await countJobs(JOBS_COUNT_CAP);
          for (const [status, n] of Object.entries(counts)) this.set({ status }, n);
        } catch (err) {
          // No figures rather than stale ones; the rest of the scrape still answers.
          this.reset();
          onError?.(err);
        }
      },
    });
  }

  request(route: string, method: string, status: number, seconds: number): void {
    this.#requests.inc({ route, method, status });
    this.#durations.observe({ route, method }, seconds);
  }

  rateLimited(window: unknown): void {
    this.#rateLimited.inc({ window: typeof window === 'string' && WINDOWS.has(window) ? window : 'other' });
  }

  probe(tool: string, outcome: string): void {
    this.#probes.inc({ tool, outcome });
  }

  webhookAttempt(result: WebhookAttemptResult): void {
    this.#webhooks.inc({ outcome: result });
  }

  /** The text exposition of this instance's metrics and the process's. */
  async exposition(): Promise<{ contentType: string; body: string }> {
    const merged = Registry.merge([processMetrics(), this.registry]);
    return { contentType: merged.contentType, body: await merged.metrics() };
  }
}
