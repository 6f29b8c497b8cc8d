import Fastify, { LogController, type FastifyInstance } from 'fastify';
import type { Config } from './config.js';
import { AccountService, type Clock } from './domain/accounts/service.js';
import type { Store } from './infra/store/store.js';
import { BODY_LIMIT_BYTES } from './http/limits.js';
import { registerOpenApi } from './http/openapi.js';
import { API_PREFIX, registerAuth } from './http/plugins/auth.js';
import { registerErrorHandling } from './http/plugins/errors.js';
import { genReqId, registerObservability } from './http/plugins/observability.js';
import type { RouteDeps, UsageReader } from './http/routes/deps.js';
import { healthRoutes } from './http/routes/health.js';
import { userRoutes } from './http/routes/user.js';
import { ErrorBody } from './http/schemas/common.js';
import { validatorCompiler } from './http/validation.js';

export interface AppDeps {
  config: Config;
  store: Store;
  clock?: Clock;
  usage?: UsageReader;
  /** pino options, or false for silence (tests). */
  logger?: boolean | { level: string };
}

/** Builds the whole service around its collaborators; never listens (tests use inject or port 0). */
export async function buildApp(deps: AppDeps): Promise<FastifyInstance> {
  const app = Fastify({
    logger: deps.logger ?? { level: deps.config.logLevel },
    // One line per request is written by the observability plugin instead.
    logController: new LogController({ disableRequestLogging: true }),
    genReqId,
    requestIdHeader: false,
    bodyLimit: BODY_LIMIT_BYTES,
    trustProxy: deps.config.trustProxy.length > 0 ? [...deps.config.trustProxy] : false,
    routerOptions: { ignoreTrailingSlash: false },
  });
  app.setValidatorCompiler(validatorCompiler);
  app.addSchema(ErrorBody);

  // JSON only: every other media type is a 415, not a silent string body.
  app.removeAllContentTypeParsers();
  app.addContentTypeParser('application/json', { parseAs: 'string', bodyLimit: BODY_LIMIT_BYTES }, app.getDefaultJsonParser('error', 'error'));

  const accounts = new AccountService(deps.store, deps.clock);
  const routeDeps: RouteDeps = {
    config: deps.config,
    accounts,
    usage: deps.usage ?? { callsToday: async () => 0 },
  };

  registerObservability(app);
  registerErrorHandling(app);
  registerAuth(app, accounts);
  await registerOpenApi(app);

  await app.register(async (api) => {
    await userRoutes(api, routeDeps);
  }, { prefix: API_PREFIX });
  await healthRoutes(app, deps.store);

  return app;
}
