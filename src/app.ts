import Fastify, { LogController, type FastifyBaseLogger, type FastifyInstance } from 'fastify';
import { pino } from 'pino';
import pinoPretty from 'pino-pretty';
import { configuredJudgeUrl, type Config, type LogFormat } from './config.js';
import { AccountService, type Clock } from './domain/accounts/service.js';
import type { Store } from './domain/store.js';
import { BODY_LIMIT_BYTES } from './http/limits.js';
import { registerOpenApi } from './http/openapi.js';
import { API_PREFIX, accountKey, accountLimiterOptions, registerAccess } from './http/plugins/auth.js';
import { errorResponseOf, registerErrorHandling } from './http/plugins/errors.js';
import { registerConcurrency } from './http/plugins/concurrency.js';
import { connectionOptions } from './http/plugins/connection.js';
import { registerDraining } from './http/plugins/draining.js';
import { RouteIndex } from './http/route-index.js';
import { genReqId, registerObservability } from './http/plugins/observability.js';
import type { RouteDeps } from './http/routes/deps.js';
import { usageRoutes } from './http/routes/usage.js';
import { callsRecordedTo, registerUsageRecording } from './http/plugins/usage.js';
import { UsageService } from './domain/usage/service.js';
import { createRateLimiter } from './infra/ratelimit/index.js';
import type { RateLimiter } from './domain/usage/rate-limit.js';
import { GroupCommitRecorder } from './infra/usage/group-commit.js';
import { createDialer, type Dialer } from './infra/net/dialer.js';
import { ipv6Routes } from './http/routes/ipv6.js';
import { dnsRoutes } from './http/routes/dns.js';
import { portRoutes } from './http/routes/ports.js';
import { PortScanner } from './domain/ports/index.js';
import { DnsLookupService } from './domain/dns/index.js';
import { createWhoisService } from './domain/whois/index.js';
import { createDnsClient } from './infra/dns/index.js';
import type { DnsClient } from './domain/dns/client.js';
import { healthRoutes } from './http/routes/health.js';
import { proxyRoutes } from './http/routes/proxy.js';
import { judgeRoutes } from './http/routes/judge.js';
import { Judge, JudgeDirectory, ProxyChecker, type Timeouts as ProxyTimeouts } from './domain/proxy/index.js';
import { createGeoReader } from './infra/geoip/index.js';
import type { GeoReader } from './domain/ip/geoip.js';
import { ipRoutes } from './http/routes/ip.js';
import { userRoutes } from './http/routes/user.js';
import { ErrorBody } from './http/schemas/common.js';
import { validatorCompiler } from './http/validation.js';
import { withoutRepeats } from './lib/repeat-filter.js';
import { LoginService } from './domain/accounts/logins.js';
import type { PasswordHasher } from './domain/accounts/passwords.js';
import { WebhookSecrets } from './domain/webhooks/secrets.js';
import { createWebhooks, type WebhookTuning } from './infra/webhooks/index.js';
import { webhookRoutes } from './http/routes/webhooks.js';
import { registerPages } from './http/pages/plugin.js';
import { jsonBodyParser } from './http/json-body.js';
import { concurrentProbes } from './domain/accounts/plans.js';
import { JobCancelledError, JobService } from './domain/jobs/service.js';
import { createJobQueue } from './infra/jobs/index.js';
import type { JobQueue } from './domain/jobs/queue.js';
import { jobOperations } from './operations/index.js';
import { jobRoutes } from './http/routes/jobs.js';
import { DAY_MS } from './lib/time.js';

/** A webhook queue error with the same message is logged at most this often. */
const WEBHOOK_ERROR_REPEAT_MS = 60_000;

export interface AppDeps {
  config: Config;
  store: Store;
  clock?: Clock;
  /**
   * Built from REDIS_URL (in-process when unset) unless given; the app closes only the one it
   * built. null leaves rate limiting out (no X-RateLimit-* headers, no 429s): `netdiag serve`
   * never does, the benchmark of authentication alone does (issue 2's share of the cost).
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
  /** Shorter proxy-check timeouts (tests of the timeout paths). */
  proxyTimeouts?: Partial<ProxyTimeouts>;
  /** pino options, or false for silence (tests). */
  logger?: boolean | { level: string };
  /** The job engine; the embedded one (jobs in the database, NETDIAG_WORKERS here) unless given. */
  jobQueue?: JobQueue;
  /** Webhook delivery's schedule, timeout and polling (tests: milliseconds). */
  webhookTuning?: WebhookTuning;
}

/** What the OpenAPI document says about the GeoIP data: its build dates and the attribution its licences ask for. */
function geoNotes(geo: GeoReader): string[] {
  const { cityBuildDate, asnBuildDate, sources } = geo.info;
  return [
    `IP location data built ${cityBuildDate ?? 'n/a (not loaded yet)'}; ASN data built ${asnBuildDate ?? 'n/a (not loaded yet)'}.`,
    ...sources,
  ];
}

/**
 * pino to stdout, written asynchronously: lines logged while a write is in flight go out
 * together in the next one, instead of one blocking write(2) per request. Nothing is held back
 * when the server is idle, and pino flushes what is pending when the process exits.
 * LOG_FORMAT decides JSON lines or pino-pretty's readable ones; unset, a terminal gets pretty.
 */
function requestLogger(level: string, format: LogFormat | undefined): FastifyBaseLogger {
  if ((format ?? (process.stdout.isTTY ? 'pretty' : 'json')) === 'json') {
    return pino({ level }, pino.destination({ dest: 1, sync: false })) as FastifyBaseLogger;
  }
  const stream = pinoPretty({ destination: 1, sync: false, colorize: process.stdout.isTTY === true, singleLine: true, translateTime: 'SYS:HH:MM:ss.l', ignore: 'pid,hostname' });
  return pino({ level }, stream) as FastifyBaseLogger;
}

const checkers = new WeakMap<FastifyInstance, ProxyChecker>();

/** The proxy checker of an app buildApp made (`netdiag worker` asks whether it has a judge). */
export function proxyCheckerOf(app: FastifyInstance): ProxyChecker {
  return checkers.get(app)!;
}

/** Builds the whole service around its collaborators; never listens (tests use inject or port 0). */
export async function buildApp(deps: AppDeps): Promise<FastifyInstance> {
  const app = Fastify({
    ...(deps.logger === false
      ? { logger: false }
      : { loggerInstance: requestLogger(typeof deps.logger === 'object' ? deps.logger.level : deps.config.logLevel, deps.config.logFormat) }),
    // One line per request is written by the observability plugin instead.
    logController: new LogController({ disableRequestLogging: true }),
    genReqId,
    requestIdHeader: false,
    bodyLimit: BODY_LIMIT_BYTES,
    trustProxy: deps.config.trustProxy.length > 0 ? [...deps.config.trustProxy] : false,
    // A job id longer than Fastify's default 100 is still a 404 (not the router's 400).
    routerOptions: { ignoreTrailingSlash: false, maxParamLength: 1024 },
    ...connectionOptions(deps.config.timeouts),
    // Fastify's own 503 while closing is not the envelope; registerDraining answers instead.
    return503OnClosing: false,
  });
  app.setValidatorCompiler(validatorCompiler);
  app.addSchema(ErrorBody);

  // JSON only: every other media type is a 415, not a silent string body.
  app.removeAllContentTypeParsers();
  app.addContentTypeParser('application/json', { parseAs: 'string', bodyLimit: BODY_LIMIT_BYTES }, jsonBodyParser(app.getDefaultJsonParser('error', 'error')));

  const clock = deps.clock ?? (() => new Date());
  const accounts = new AccountService(deps.store, clock);
  // The app closes only the limiter it built itself.
  const ownLimiter =
    deps.limiter === undefined
      ? createRateLimiter(deps.config.redisUrl, accountLimiterOptions(deps.store.usage, app.log, deps.config.reconcileMs, () => clock().getTime()))
      : undefined;
  const limiter = ownLimiter ?? deps.limiter ?? null;
  // Written records are no longer "admitted but unrecorded" calls for the limiter (a crash gives those back).
  const recorder = new GroupCommitRecorder(deps.store.usage, app.log, limiter ? callsRecordedTo(limiter) : undefined);
  const dialer = deps.dialer ?? createDialer(deps.config);
  const dnsClient = deps.dnsClient ?? createDnsClient(deps.config);
  const geo = deps.geo ?? createGeoReader({ cityDb: deps.config.geoipCityDb, asnDb: deps.config.geoipAsnDb });
  const proxy = new ProxyChecker({
    dialer,
    // The judge URL set, else this server's own /judge, else (a worker) the one recorded in the database.
    judges: new JudgeDirectory({ configured: configuredJudgeUrl(deps.config), record: deps.store.judge }),
    // Nonces and the signing secret in the database: every instance behind one judge URL agrees.
    judge: new Judge({ ledger: deps.store.judge, secret: deps.config.judgeSecret }),
    sslTarget: deps.config.sslCheckTarget,
    geo,
    ...(deps.proxyTimeouts ? { timeouts: deps.proxyTimeouts } : {}),
  });
  // Job webhooks: every instance sends due deliveries from the database; the queue stops with the app.
  const webhookSecrets = new WebhookSecrets(deps.store, clock);
  const webhooks = createWebhooks({
    store: deps.store,
    dialer,
    secrets: webhookSecrets,
    // Deliveries and their attempts are kept as long as the jobs they belong to.
    tuning: { keepMs: deps.config.jobTtlDays * DAY_MS, ...deps.webhookTuning },
    // While the database is away every poll fails: one line per message per WEBHOOK_ERROR_REPEAT_MS.
    onError: withoutRepeats((err) => app.log.warn({ err }, 'webhook delivery: the database could not be updated; the delivery is retried'), WEBHOOK_ERROR_REPEAT_MS),
    // Started when the app is ready: its first sweep builds events with the job service's view, wired below.
    start: false,
  });
  app.addHook('onClose', () => webhooks.queue.close());
  const routeDeps: RouteDeps = {
    config: deps.config,
    accounts,
    usage: new UsageService(deps.store.usage),
    dialer,
    dns: new DnsLookupService({ client: dnsClient }),
    proxy,
    whois: createWhoisService(deps.config, dialer),
    ports: new PortScanner({ dialer }),
    ip: { geo, dns: dnsClient, dnsblZones: deps.config.dnsblZones },
    jobWebhooks: webhooks.delivery,
  };
  deps.store.onBackgroundError((err) =>
    app.log.warn({ err }, 'token last-used times could not be written; they are kept and retried at the next flush'),
  );
  // Pending usage records reach the store before whoever owns it closes it.
  app.addHook('onClose', async () => {
    await recorder.drain();
    await ownLimiter?.close();
  });

  registerObservability(app);
  // Before access: a request refused while shutting down spends no rate budget and is no call.
  registerDraining(app);
  const routes = new RouteIndex(app);
  registerErrorHandling(app, routes);
  // Date.now() unless a test gave a clock: a Date per request only to read its time is waste.
  const now = deps.clock ? () => clock().getTime() : Date.now;
  const access = registerAccess(app, { accounts, limiter, now });
  const slots = registerConcurrency(app, { redisUrl: deps.config.redisUrl, onRefused: access.refund });
  // Jobs: state in the database, run by the queue (embedded, or BullMQ with REDIS_URL: NETDIAG_WORKERS in this process).
  const jobQueue =
    deps.jobQueue ??
    createJobQueue(deps.config, deps.store, {
      cancelReason: () => new JobCancelledError(),
      onError: (err) => app.log.error({ err }, 'job queue'),
      onRecovered: (err) => app.log.warn({ err }, 'job queue: a worker paused past its lock; the job runs again'),
      onRedis: (state, err) =>
        state === 'lost'
          ? app.log.warn({ err }, 'job queue: Redis cannot be reached; new jobs wait queued in the database until it is back')
          : app.log.info('job queue: Redis is back'),
    });
  const jobs = new JobService({
    repo: deps.store.jobs,
    queue: jobQueue,
    operations: jobOperations(routeDeps),
    errorBody: (err) => errorResponseOf(err).body,
    slots,
    concurrentProbes,
    ownerKey: accountKey,
    events: routeDeps.jobWebhooks,
    webhooks: routeDeps.jobWebhooks,
    ttlDays: deps.config.jobTtlDays,
    clock,
    onError: (err, what) => app.log.error({ err }, what),
  });
  routeDeps.jobs = jobs;
  checkers.set(app, proxy);
  // A suspension (the admin page) stops the account's runs as a DELETE does.
  accounts.onJobsCancelled = (ids) => jobs.stopped(ids);
  // Events queued after the fact (the webhook sweep) show the job exactly as the API does.
  webhooks.delivery.viewOf = (row) => jobs.view(row);
  app.addHook('onReady', async () => {
    webhooks.queue.start();
    jobs.start();
  });
  app.addHook('onClose', async () => jobs.close());
  if (deps.recordUsage !== false) registerUsageRecording(app, recorder);
  await registerOpenApi(app, { dataNotes: geoNotes(geo) });

  await app.register(async (api) => {
    await userRoutes(api, routeDeps);
    await usageRoutes(api, routeDeps);
    await ipv6Routes(api, routeDeps);
    await dnsRoutes(api, routeDeps);
    await ipRoutes(api, routeDeps);
    await proxyRoutes(api, routeDeps);
    await portRoutes(api, routeDeps);
    await jobRoutes(api, routeDeps);
    await webhookRoutes(api, { secrets: webhookSecrets, now });
  }, { prefix: API_PREFIX });
  await healthRoutes(app, deps.store, limiter);
  await judgeRoutes(app, routeDeps);
  await registerPages(app, {
    config: deps.config,
    accounts,
    logins: new LoginService(deps.store, accounts, deps.config.signup, clock, deps.hasher),
    usage: routeDeps.usage,
    usageRecords: deps.store.usage,
    webhookSecrets,
    limiter,
    jobs,
    now,
  });

  return app;
}
