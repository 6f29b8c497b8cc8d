import type { FastifyBaseLogger } from 'fastify';
import { pino } from 'pino';
import pinoPretty from 'pino-pretty';
import type { AppServices } from './app.js';
import { configuredJudgeUrl, type Config, type LogFormat } from './config.js';
import { LoginService } from './domain/accounts/logins.js';
import type { PasswordHasher } from './domain/accounts/passwords.js';
import { inFlightLimit } from './domain/accounts/plans.js';
import { AccountService, type Clock } from './domain/accounts/service.js';
import { Checker } from './domain/checks/index.js';
import { DnsLookupService } from './domain/dns/index.js';
import { JobService } from './domain/jobs/service.js';
import { JobViews } from './domain/jobs/views.js';
import { PortScanner } from './domain/ports/index.js';
import { TcpPinger } from './domain/ping/index.js';
import { Judge, JudgeDirectory, ProxyChecker, type Timeouts as ProxyTimeouts } from './domain/proxy/index.js';
import { UsageService } from './domain/usage/service.js';
import { WebhookSecrets } from './domain/webhooks/secrets.js';
import { createWhoisService } from './domain/whois/index.js';
import { RegistrationLookup } from './domain/rdap/index.js';
import { createRdap, type RdapTuning } from './infra/rdap/index.js';
import { accountKey } from './domain/owner.js';
import { callsRecordedTo, recordsCallsOf, windowSeedFromUsage } from './domain/usage/recorded-calls.js';
import { jobErrorOf } from './error-answers.js';
import type { DnsClient } from './domain/dns/client.js';
import { createDnsClient } from './infra/dns/index.js';
import type { GeoReader } from './domain/ip/geoip.js';
import { createGeoReader, watchGeoFiles, type GeoWatch, type ReloadableGeoReader } from './infra/geoip/index.js';
import { NO_METRICS } from './domain/metrics.js';
import { PrometheusMetrics } from './infra/metrics/prometheus.js';
import { createInFlightSlots } from './infra/in-flight/index.js';
import { createJobQueue } from './infra/jobs/index.js';
import type { JobQueue } from './domain/jobs/queue.js';
import { createConnector } from './infra/net/connector.js';
import { createDialer, type Dialer } from './infra/net/dialer.js';
import { createPathTools } from './infra/path/index.js';
import type { PathTools } from './domain/path/index.js';
import type { RateLimiter } from './domain/usage/rate-limit.js';
import { createRateLimiter } from './infra/ratelimit/index.js';
import { MemoryRateLimiter } from './infra/ratelimit/memory.js';
import { openStore } from './infra/store/index.js';
import type { Store } from './domain/store.js';
import { GroupCommitRecorder } from './infra/usage/group-commit.js';
import { createWebhooks, type WebhookTuning } from './infra/webhooks/index.js';
import { jobOperations } from './operations/index.js';
import type { OperationDeps } from './operations/operation.js';
import { withoutRepeats } from './lib/repeat-filter.js';
import { DAY_MS } from './lib/time.js';
import { closeInOrder } from './lib/close-in-order.js';
import { JobCancelledError } from './errors.js';

/**
 * The composition root: every service, repository, limiter, queue, dialer, reader and Redis
 * client of a process, built once from the Config in dependency order and never patched
 * afterwards. `netdiag serve` hands the result to buildApp (src/app.ts) and listens;
 * `netdiag worker` only starts it. Whoever composed closes: close() shuts down what compose
 * opened, in order (each step even when one before it failed), and leaves alone what it was given.
 */

/** A webhook queue error with the same message is logged at most this often. */
const WEBHOOK_ERROR_REPEAT_MS = 60_000;

/** What a caller may give instead of what compose would build (tests, benchmarks). */
export interface ComposeOptions {
  /** Opened from DATABASE_URL unless given; compose closes only the one it opened. */
  store?: Store;
  clock?: Clock;
  /**
   * Built from REDIS_URL (in-process when unset) unless given; compose closes only the one it
   * built. null leaves rate limiting out (no X-RateLimit-* headers, no 429s): `netdiag serve`
   * never does, the benchmark of authentication alone does (bench/auth-overhead.ts, BENCH_PARTS=auth).
   */
  limiter?: RateLimiter | null;
  /** false leaves usage recording out, as `limiter: null` leaves limiting out; on by default. */
  recordUsage?: boolean;
  /** The dashboard's password hasher: Argon2id unless given (tests count its work). */
  hasher?: PasswordHasher;
  /** Built from the configuration unless given (tests spy on it). */
  dialer?: Dialer;
  /** Built from NETDIAG_DNS_SERVERS unless given. */
  dnsClient?: DnsClient;
  /** GeoIP reader; built from NETDIAG_GEOIP_* (or the bundled data) unless given. */
  geo?: GeoReader;
  /** The path tools, built with their runner unless given (tests run the programs in a network namespace). */
  path?: PathTools;
  /** Shorter RDAP timeouts, a test CA for https RDAP servers (tests of hostile servers). */
  rdapTuning?: RdapTuning;
  /** Shorter proxy-check timeouts (tests of the timeout paths). */
  proxyTimeouts?: Partial<ProxyTimeouts>;
  /** pino options, or false for silence (tests). */
  logger?: boolean | { level: string };
  /** The job engine; the embedded one (jobs in the database, NETDIAG_WORKERS here) unless given. */
  jobQueue?: JobQueue;
  /** Webhook delivery's schedule, timeout and polling (tests: milliseconds). */
  webhookTuning?: WebhookTuning;
  /** How often a running job renews its lease, and so sees a cancel made elsewhere (tests: less than JOB_LEASE_RENEW_MS). */
  jobTuning?: { renewMs?: number };
}

/** The built graph: what the app is given, and its lifecycle. */
export interface Composition extends AppServices {
  /** Reads the data files compose opened (the GeoIP databases), so no request waits for them. */
  load(): Promise<void>;
  /** Starts the job queue (NETDIAG_WORKERS runs here), webhook delivery, and the watch on the operator's GeoIP files. */
  start(): void;
  /** Reads the operator's GeoIP files again now (SIGHUP); the outcome is logged, never thrown. */
  reloadGeo(): Promise<void>;
  /** Stops what start() started and closes what compose opened; the store last, whatever failed before it. */
  close(): Promise<void>;
}

/**
 * pino to stdout, written asynchronously: lines logged while a write is in flight go out
 * together in the next one, instead of one blocking write(2) per request. Nothing is held back
 * when the server is idle, and pino flushes what is pending when the process exits.
 * LOG_FORMAT decides JSON lines or pino-pretty's readable ones; unset, a terminal gets pretty.
 */
function processLogger(level: string, format: LogFormat | undefined): FastifyBaseLogger {
  if ((format ?? (process.stdout.isTTY ? 'pretty' : 'json')) === 'json') {
    return pino({ level }, pino.destination({ dest: 1, sync: false })) as FastifyBaseLogger;
  }
  const stream = pinoPretty({ destination: 1, sync: false, colorize: process.stdout.isTTY === true, singleLine: true, translateTime: 'SYS:HH:MM:ss.l', ignore: 'pid,hostname' });
  return pino({ level }, stream) as FastifyBaseLogger;
}

/** Builds the process's object graph from `config`; nothing in it runs until start(). */
export async function compose(config: Config, opts: ComposeOptions = {}): Promise<Composition> {
  const log =
    opts.logger === false
      ? (pino({ level: 'silent' }) as FastifyBaseLogger)
      : processLogger(typeof opts.logger === 'object' ? opts.logger.level : config.logLevel, config.logFormat);
  const store = opts.store ?? (await openStore(config.databaseUrl));
  store.onBackgroundError((err) => log.warn({ err }, 'token last-used times could not be written; they are kept and retried at the next flush'));
  const clock = opts.clock ?? (() => new Date());
  // Date.now() unless a test gave a clock: a Date per request only to read its time is waste.
  const now = opts.clock ? () => clock().getTime() : Date.now;

  // Limits and usage: the limiter first, since written records are no longer "admitted but
  // unrecorded" calls for it (a crash gives those back).
  // Windows it has not seen start from the recorded usage; on Redis, accounts' calls count as
  // unrecorded until their usage records are written, so the calls of an instance killed before
  // writing them are given back within NETDIAG_RECONCILE_S.
  const ownLimiter =
    opts.limiter === undefined
      ? createRateLimiter(config.redisUrl, { seed: windowSeedFromUsage(store.usage), log, recordsCallsOf, reconcileMs: config.reconcileMs, now: () => clock().getTime() })
      : undefined;
  const limiter = ownLimiter ?? opts.limiter ?? null;
  const recorder = opts.recordUsage === false ? null : new GroupCommitRecorder(store.usage, log, limiter ? callsRecordedTo(limiter) : undefined);
  // Work in flight per account: through Redis (leases that lapse if an instance dies) with REDIS_URL.
  const slots = createInFlightSlots(config.redisUrl, log);

  // The probes, and the operations that run them.
  const dialer = opts.dialer ?? createDialer(config);
  // Connecting to checked addresses, TLS and HTTP on the dialer's sockets: the checks' one kit.
  const connector = createConnector(dialer);
  const dnsClient = opts.dnsClient ?? createDnsClient(config);
  // The GeoIP reader given (tests), or one made here, whose data load() reads.
  let geo: GeoReader;
  let ownGeo: ReloadableGeoReader | undefined;
  let geoWatch: GeoWatch | undefined;
  if (opts.geo) {
    geo = opts.geo;
  } else {
    ownGeo = createGeoReader({ cityDb: config.geoipCityDb, asnDb: config.geoipAsnDb });
    geo = ownGeo;
  }
  // GET /metrics (NETDIAG_METRICS_TOKEN): one registry for this graph; nothing is counted when it is off.
  const prometheus = config.metricsToken
    ? new PrometheusMetrics({ countJobs: (cap) => store.jobs.countByStatus(cap), onError: (err) => log.warn({ err }, 'metrics: the jobs could not be counted') })
    : null;
  const metrics = prometheus ?? NO_METRICS;
  // RDAP's bootstrap files are fetched on first use, not here; a failed fetch falls back to the snapshot.
  const rdap = createRdap(config, dialer, {
    ...opts.rdapTuning,
    onBootstrapError: (kind, err) => log.warn({ err, file: `${kind}.json`, from: config.rdapBootstrap }, 'RDAP bootstrap file could not be fetched; the shipped snapshot (or the last good copy) is used'),
  });
  const probes: OperationDeps = {
    metrics,
    dialer,
    dns: new DnsLookupService({ client: dnsClient, policy: dialer.policy }),
    whois: new RegistrationLookup({ rdap, whois: createWhoisService(config, dialer) }),
    rdap,
    ports: new PortScanner({ dialer }),
    ping: new TcpPinger({ dialer }),
    proxy: new ProxyChecker({
      dialer,
      connector,
      // The judge URL set, else this server's own /judge, else (a worker) the one recorded in the database.
      judges: new JudgeDirectory({ configured: configuredJudgeUrl(config), record: store.judge }),
      // Nonces and the signing secret in the database: every instance behind one judge URL agrees.
      judge: new Judge({ ledger: store.judge, secret: config.judgeSecret }),
      sslTarget: config.sslCheckTarget,
      geo,
      ...(opts.proxyTimeouts ? { timeouts: opts.proxyTimeouts } : {}),
    }),
    ip: { geo, dns: dnsClient, dnsblZones: config.dnsblZones },
    checks: new Checker({ dialer, connector, extraCaPem: config.extraCaCerts }),
    // ICMP ping, traceroute, mtr: the system's programs, one process budget for this server.
    path: opts.path ?? createPathTools({ dialer, dns: dnsClient, geo }),
  };
  const operations = jobOperations(probes);

  // Jobs and their webhooks. The views come first: webhook delivery builds the events it queues
  // after the fact (its sweep) with them, so they show the job exactly as the API does, and the
  // job service, built last, tells delivery of the jobs it finishes.
  const views = new JobViews({ repo: store.jobs, operations, attemptsOf: (jobId) => store.webhookDeliveries.attempts(jobId) });
  const webhookSecrets = new WebhookSecrets(store, clock);
  // While the database is away every poll fails: one line per message per WEBHOOK_ERROR_REPEAT_MS.
  const webhookError = withoutRepeats((err) => log.warn({ err }, 'webhook delivery: the database could not be updated; the delivery is retried'), WEBHOOK_ERROR_REPEAT_MS);
  // Every instance sends due deliveries from the database; started by start().
  const webhooks = createWebhooks({
    store,
    dialer,
    secrets: webhookSecrets,
    // Deliveries and their attempts are kept as long as the jobs they belong to.
    tuning: { keepMs: config.jobTtlDays * DAY_MS, ...opts.webhookTuning },
    onError: webhookError,
    metrics,
    start: false,
    viewOf: (row) => views.view(row),
  });
  // Jobs: state in the database, run by the queue (embedded, or BullMQ with REDIS_URL: NETDIAG_WORKERS in this process).
  const jobQueue =
    opts.jobQueue ??
    (await createJobQueue(config, store, {
      cancelReason: () => new JobCancelledError(),
      renewMs: opts.jobTuning?.renewMs,
      onError: (err) => log.error({ err }, 'job queue'),
      onRecovered: (err) => log.warn({ err }, 'job queue: a worker paused past its lock; the job runs again'),
      onRedis: (state, err) =>
        state === 'lost'
          ? log.warn({ err }, 'job queue: Redis cannot be reached; new jobs wait queued in the database until it is back')
          : log.info('job queue: Redis is back'),
    }));
  const jobs = new JobService({
    repo: store.jobs,
    queue: jobQueue,
    operations,
    views,
    errorBody: jobErrorOf,
    slots,
    inFlightLimit,
    ownerKey: accountKey,
    events: webhooks.delivery,
    webhooks: webhooks.delivery,
    ttlDays: config.jobTtlDays,
    clock,
    onError: (err, what) => log.error({ err }, what),
  });

  // Accounts last: a suspension (the admin page) stops the account's runs as a DELETE does.
  const accounts = new AccountService(store, clock, { onJobsCancelled: (ids) => jobs.stopped(ids) });
  const logins = new LoginService(store, accounts, config.signup, clock, opts.hasher);

  let closing: Promise<void> | undefined;
  return {
    config,
    log,
    silent: opts.logger === false,
    store,
    now,
    accounts,
    logins,
    usage: new UsageService(store.usage),
    limiter,
    // Without the API's limiter (a test's `limiter: null`) the sign-in forms still count attempts, here in memory.
    loginLimiter: limiter ?? new MemoryRateLimiter(),
    recorder,
    slots,
    geo,
    ...probes,
    jobs,
    jobWebhooks: webhooks.delivery,
    webhookSecrets,
    httpMetrics: prometheus,
    load: async () => {
      await ownGeo?.load();
    },
    start() {
      webhooks.queue.start();
      jobs.start();
      if (ownGeo && !geoWatch) geoWatch = watchGeoFiles(ownGeo, { log });
    },
    reloadGeo: async () => {
      await geoWatch?.reloadAll();
    },
    // Runs in flight are aborted and given back to the queue first; pending usage records then
    // reach the store before it closes. A step that fails does not keep the later ones open.
    close: () =>
      (closing ??= closeInOrder([
        () => geoWatch?.close(),
        () => jobs.close(),
        () => rdap.close(),
        () => slots.close(),
        () => recorder?.drain(),
        () => ownLimiter?.close(),
        () => webhooks.queue.close(),
        () => (opts.store ? undefined : store.close()),
      ])),
  };
}
