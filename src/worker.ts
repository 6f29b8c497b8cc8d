import { compose, type Composition } from './compose.js';
import type { Config } from './config.js';
import { configSummary, describeDatabase, withoutPassword } from './config-summary.js';
import { judgeHealth } from './domain/proxy/index.js';
import { exitOnSignals, reloadGeoOnSighup } from './runtime.js';
import { WorkerConfigError } from './errors.js';
import type { MetricsListener } from './http/metrics-listener.js';

export interface RunningWorker {
  services: Composition;
  close(): Promise<void>;
}

/** The period of the timer that keeps the worker's event loop alive: any, under setInterval's 2^31 - 1 ms limit. */
const KEEP_ALIVE_INTERVAL_MS = 2 ** 30;

/**
 * `netdiag worker`: the job engine and webhook delivery of an API instance without its HTTP
 * server. It shares the database (and, with REDIS_URL, the BullMQ queue and the accounts'
 * work-in-flight slots) with the API instances, runs NETDIAG_WORKERS jobs at once and sends due
 * webhook deliveries. SIGTERM/SIGINT: runs in flight are aborted and their jobs given back to the
 * queue (another worker takes them at once), pending deliveries' claims given back, then exit 0.
 */
export async function startWorker(config: Config, log: (line: string) => void = (l) => process.stderr.write(l + '\n')): Promise<RunningWorker> {
  if (config.workers === 0) throw new WorkerConfigError('netdiag worker runs jobs: NETDIAG_WORKERS must be 1 or more (0 is for API instances that only accept jobs)');
  // No HTTP server: the graph alone, started at once (the job queue and webhook delivery).
  const services = await compose(config);
  await services.load();
  services.start();
  const engine = config.redisUrl === undefined ? 'embedded queue (polling the database; set REDIS_URL for BullMQ)' : `BullMQ on ${withoutPassword(config.redisUrl)}`;
  // No HTTP server, so no judge of its own: the one set, else the one an API instance recorded.
  const judge = await judgeHealth(services.proxy);
  const judgeSays = judge.error === null ? `judge ${withoutPassword(judge.url!)}` : `${judge.url === null ? 'no judge' : `judge ${withoutPassword(judge.url)} not answering`}: proxy jobs fail (503) until it is fixed`;
  // The job queue's and the delivery's timers are unref'd, and without REDIS_URL no connection
  // holds the event loop: this does, until the worker closes (else it exited at once, code 0).
  const alive = setInterval(() => undefined, KEEP_ALIVE_INTERVAL_MS);
  // Its own /metrics (NETDIAG_METRICS_PORT): the probes and deliveries of this process are counted
  // here and nowhere else, so a scrape of every API instance and every worker counts each once.
  let metrics: MetricsListener | undefined;
  let closing: Promise<void> | undefined;
  const close = (): Promise<void> =>
    (closing ??= (async () => {
      clearInterval(alive);
      // Scraped until the work is given back: the last counts are readable while it drains.
      try {
        await services.close();
      } finally {
        await metrics?.close();
      }
    })());
  if (config.metricsPort !== undefined && services.httpMetrics && config.metricsToken !== undefined) {
    try {
      // The worker's only HTTP code, loaded only when it is asked for: Fastify, the API's
      // /metrics route, token check, envelope and connection bounds (test/architecture.test.ts).
      const { listenForMetrics } = await import('./http/metrics-listener.js');
      metrics = await listenForMetrics({ metrics: services.httpMetrics, token: config.metricsToken, host: config.host, port: config.metricsPort, timeouts: config.timeouts });
    } catch (err) {
      await close();
      throw err;
    }
  }
  const metricsSays = metrics ? `; metrics on ${config.host}:${metrics.port}/metrics` : '';
  // Proxy checks look up their exit's place: the worker reloads the GeoIP files as the server does.
  reloadGeoOnSighup(services);
  exitOnSignals(services.log, config.shutdownGraceMs, close, {
    start: 'worker shutting down: runs in flight go back to the queue',
    late: 'the worker did not stop within the shutdown grace (NETDIAG_SHUTDOWN_GRACE_S); exiting anyway',
    failed: 'worker shutdown failed',
  });
  // Announced once a SIGTERM is handled: one sent on seeing this line gets the clean shutdown.
  log(`netdiag worker: database ${describeDatabase(config.databaseUrl)}, jobs through ${engine}, ${config.workers} at once; webhook deliveries sent from here too; ${judgeSays}${metricsSays}`);
  services.log.info({ config: configSummary(config) }, 'worker started: effective configuration');
  if (judge.error !== null) services.log.warn({ judge: judge.url }, judge.error);
  return { services, close };
}
