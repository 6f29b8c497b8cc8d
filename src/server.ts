import type { FastifyInstance } from 'fastify';
import { performance } from 'node:perf_hooks';
import { buildApp } from './app.js';
import { compose, type Composition } from './compose.js';
import { publicBaseUrl, type Config } from './config.js';
import { configSummary } from './config-summary.js';
import { passwordLinkUrl } from './domain/accounts/logins.js';
import { exitOnSignals, reloadGeoOnSighup } from './runtime.js';

/** Listens, prints the first token on an empty database, and shuts down gracefully. */
export async function startServer(config: Config): Promise<FastifyInstance> {
  const services = await compose(config);
  // The GeoIP data is read before the first request, so no lookup waits for it (and the OpenAPI
  // document names its build dates).
  const geoStart = performance.now();
  await services.load();
  const geoLoadMs = Math.round(performance.now() - geoStart);
  const app = await buildApp(services);
  services.log.info({ ms: geoLoadMs, cityBuildDate: services.geo.info.cityBuildDate, asnBuildDate: services.geo.info.asnBuildDate }, 'GeoIP data loaded');
  // The services close after the app: app.close() lets the requests in flight finish (and be
  // recorded); then the job runs stop, pending usage records are written, and the store closes last.
  const closeAll = async () => {
    await app.close();
    await services.close();
  };

  await app.listen({ port: config.port, host: config.host });
  // Jobs run and webhook deliveries go out from here once the server is up.
  services.start();
  // What this instance runs with, in one line and without secrets: the first thing to check
  // when the server does not find the database or the Redis the CLI and the other instances use.
  app.log.info({ config: configSummary(config) }, 'effective configuration');
  const bound = app.server.address();
  await bootstrapFirstAccount(services, config, typeof bound === 'object' && bound ? bound.port : config.port);

  reloadGeoOnSighup(services);

  // Requests in flight when the signal lands still get their answer (and are recorded), on a
  // connection that then closes; new ones get a 503 (src/http/plugins/draining.ts). Past the
  // grace the process exits anyway.
  exitOnSignals(services.log, config.shutdownGraceMs, closeAll, {
    start: 'shutting down: finishing in-flight requests, refusing new ones',
    late: 'requests still in flight at the end of the shutdown grace (NETDIAG_SHUTDOWN_GRACE_S); exiting anyway',
    failed: 'shutdown failed',
  });
  return app;
}

/**
 * On a database with no accounts: the first admin, its API token, and a one-time link to set its
 * dashboard password, printed once (no mail server is assumed).
 */
async function bootstrapFirstAccount({ accounts, logins }: Pick<Composition, 'accounts' | 'logins'>, config: Config, port: number): Promise<void> {
  if ((await accounts.countAccounts()) > 0) return;
  const { account, token } = await accounts.createAccount({ email: config.adminEmail, name: 'Administrator', plan: 'enterprise', isAdmin: true });
  const base = publicBaseUrl(config, port);
  const link = passwordLinkUrl(base, await logins.passwordLink(account.id));
  process.stdout.write(
    [
      '',
      `netdiag: created the first account ${account.email} (admin, plan ${account.plan}).`,
      '',
      'Set its dashboard password (one-time link, valid 24 hours):',
      '',
      `    ${link}`,
      '',
      'Its API token, shown only this once:',
      '',
      `    ${token}`,
      '',
      `Try it:  curl -H "Authorization: Bearer ${token}" ${base}/api/user`,
      'More accounts and tokens: on the dashboard, or npx netdiag account create --email you@example.com --name You --plan free',
      `Lost the link? On this machine: npx netdiag account reset-password --email ${account.email}`,
      '',
    ].join('\n') + '\n',
  );
}
