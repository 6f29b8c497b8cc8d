import Fastify, { LogController, type FastifyBaseLogger, type FastifyInstance } from 'fastify';
import type { LoginService } from './domain/accounts/logins.js';
import type { JobService } from './domain/jobs/service.js';
import type { JobWebhooks } from './domain/jobs/types.js';
import type { WebhookSecrets } from './domain/webhooks/secrets.js';
import { BODY_LIMIT_BYTES } from './http/limits.js';
import { jsonBodyParser } from './http/json-body.js';
import { registerOpenApi } from './http/openapi.js';
import { registerPages } from './http/pages/plugin.js';
import { API_PREFIX, registerAccess } from './http/plugins/auth.js';
import { registerInFlight } from './http/plugins/in-flight.js';
import { connectionOptions } from './http/plugins/connection.js';
import { registerDraining } from './http/plugins/draining.js';
import { registerCors } from './http/plugins/cors.js';
import { registerCompression } from './http/plugins/compression.js';
import { registerLingeringClose } from './http/plugins/lingering-close.js';
import { errorAnswerer, registerErrorHandling } from './http/plugins/errors.js';
import { genReqId, registerObservability } from './http/plugins/observability.js';
import { registerUsageRecording } from './http/plugins/usage.js';
import { operationCaller } from './http/calls.js';
import { callSteps } from './http/call-steps.js';
import { metricsRoute, registerMetrics, type HttpMetrics } from './http/plugins/metrics.js';
import { RouteIndex } from './http/route-index.js';
import type { RouteDeps } from './http/routes/deps.js';
import { healthRoutes } from './http/routes/health.js';
import { jobRoutes } from './http/routes/jobs.js';
import { jobStreams } from './http/job-streams.js';
import { judgeRoutes } from './http/routes/judge.js';
import { mcpRoutes } from './http/routes/mcp.js';
import { operationRoutes } from './http/routes/operations.js';
import { usageRoutes } from './http/routes/usage.js';
import { userRoutes } from './http/routes/user.js';
import { webhookRoutes } from './http/routes/webhooks.js';
import { ErrorBody, STATUS_ERROR_BODIES } from './http/schemas/errors.js';
import { addErrorResponses } from './http/error-responses.js';
import { JobView } from './http/schemas/jobs.js';
import { WebhookEvent } from './http/schemas/webhooks.js';
import { serializerCompiler } from './http/serialization.js';
import { validatorCompiler } from './http/validation.js';
import type { GeoReader } from './domain/ip/geoip.js';
import type { InFlightSlots } from './domain/in-flight.js';
import type { RateLimiter } from './domain/usage/rate-limit.js';
import type { Store } from './domain/store.js';
import type { GroupCommitRecorder } from './infra/usage/group-commit.js';

/**
 * What buildApp registers routes and plugins with: the graph src/compose.ts builds, every
 * collaborator already made. The app makes nothing that talks to the outside world and closes
 * none of it; whoever composed the graph closes it after the app.
 */
export interface AppServices extends RouteDeps {
  store: Store;
  /** The process's logger: the app's, and every service's. */
  log: FastifyBaseLogger;
  /**
   * Logging is off (tests, benchmarks): the app runs with Fastify's null logger, as it always
   * did then (with a logger Fastify listens to every response's events).
   */
  silent: boolean;
  /** Epoch ms now: Date.now, or the test's clock. */
  now: () => number;
  logins: LoginService;
  /** null: authentication alone, no rate limiting and no X-RateLimit-* headers. */
  limiter: RateLimiter | null;
  /** Where the dashboard counts sign-in attempts: the API's limiter, or one in memory when that is null. */
  loginLimiter: RateLimiter;
  /** null: no usage recording. */
  recorder: GroupCommitRecorder | null;
  /** The accounts' work in flight, shared by the probe routes and the job engine. */
  slots: InFlightSlots;
  geo: GeoReader;
  jobs: JobService;
  jobWebhooks: JobWebhooks;
  webhookSecrets: WebhookSecrets;
  /** GET /metrics and what it counts; null when NETDIAG_METRICS_TOKEN is unset (then /metrics is a 404). */
  httpMetrics: HttpMetrics | null;
}

/** Registers the plugins and routes over the services it is given; never listens (tests use inject or port 0). */
export async function buildApp(deps: AppServices): Promise<FastifyInstance> {
  const app = Fastify({
    ...(deps.silent ? { logger: false } : { loggerInstance: deps.log }),
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
  // Every schema routes refer to by $id, added once; the serializers resolve the same set.
  const shared = [ErrorBody, ...STATUS_ERROR_BODIES, JobView, WebhookEvent];
  for (const schema of shared) app.addSchema(schema);
  app.setSerializerCompiler(serializerCompiler(shared));
  app.addHook('onRoute', addErrorResponses);

  // JSON only: every other media type is a 415, not a silent string body.
  app.removeAllContentTypeParsers();
  app.addContentTypeParser('application/json', { parseAs: 'string', bodyLimit: BODY_LIMIT_BYTES }, jsonBodyParser(app.getDefaultJsonParser('error', 'error')));

  // Before every route: it hooks each one as it is added.
  await registerCompression(app);
  registerObservability(app);
  registerMetrics(app, deps.httpMetrics);
  // Before the shutdown's 503 and the token check: a preflight carries no token, and a page must
  // be able to read a 401, 429 or 503.
  await registerCors(app, deps.config.corsOrigins);
  // Before access: a request refused while shutting down spends no rate budget and is no call.
  registerDraining(app);
  // An answer given before its body was read closes the connection without a reset.
  registerLingeringClose(app);
  const routes = new RouteIndex(app);
  const { accounts, limiter, now } = deps;
  // The steps of every call of an operation (src/http/call-steps.ts): the hooks below take them
  // for the routes' own requests, operationCaller for calls made inside a request.
  const answer = errorAnswerer();
  const steps = callSteps({ limiter, slots: deps.slots, recorder: deps.recorder, answer, metrics: deps.httpMetrics });
  registerErrorHandling(app, routes, answer);
  registerAccess(app, { accounts, limiter, now, steps });
  registerInFlight(app, steps);
  if (steps.record) registerUsageRecording(app, steps.record);
  await registerOpenApi(app);
  // One set of job streams for the API and the dashboard: an account's open streams count together.
  const streams = jobStreams(app, deps.jobs);

  await app.register(async (api) => {
    await userRoutes(api, deps);
    await usageRoutes(api, deps);
    // Every operation's route, from its declaration (src/operations/).
    await operationRoutes(api, deps);
    await jobRoutes(api, deps, streams);
    await webhookRoutes(api, { secrets: deps.webhookSecrets, now });
  }, { prefix: API_PREFIX });
  // Calls made inside another request (MCP tool calls, dashboard checks), through the same steps.
  const calls = operationCaller({ routeDeps: deps, steps });
  // A browser page of an origin the operator allows for /api (NETDIAG_CORS_ORIGINS) may call /mcp too.
  await mcpRoutes(app, calls, { publicUrl: deps.config.publicUrl, corsOrigins: deps.config.corsOrigins });
  await healthRoutes(app, deps.store, limiter, deps.geo, deps.path);
  await metricsRoute(app, { metrics: deps.httpMetrics, token: deps.config.metricsToken });
  await judgeRoutes(app, deps);
  await registerPages(app, {
    config: deps.config,
    accounts,
    logins: deps.logins,
    usage: deps.usage,
    usageRecords: deps.store.usage,
    webhookSecrets: deps.webhookSecrets,
    limiter,
    loginLimiter: deps.loginLimiter,
    jobs: deps.jobs,
    jobWebhooks: deps.jobWebhooks,
    streams,
    calls,
    now,
  });

  return app;
}
