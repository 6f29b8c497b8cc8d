import type { FastifyInstance } from 'fastify';
import { buildApp } from './app.js';
import { publicBaseUrl, type Config } from './config.js';
import { LoginService, passwordLinkUrl } from './domain/accounts/logins.js';
import type { Store } from './domain/store.js';
import { configSummary } from './config-summary.js';
import { AccountService } from './domain/accounts/service.js';
import { openStore } from './infra/store/index.js';
import { createGeoReader } from './infra/geoip/index.js';
import { performance } from 'node:perf_hooks';

/**
 * Source maps (tsx turns them on) make every stack trace expensive, and Node reads the stack of
 * every socket error, so a 1000-port scan spends a fifth of its time mapping stacks of refused
 * connections nobody looks at. The server runs without them; logged stacks then point into
 * tsx's transpiled text, which keeps the source's lines.
 */
export function useProductionRuntime(): void {
  process.setSourceMapsEnabled(false);
}

/** Listens, prints the first token on an empty database, and shuts down gracefully. */
export async function startServer(config: Config): Promise<FastifyInstance> {
  useProductionRuntime();
  const store = await openStore(config.databaseUrl);
  // The GeoIP data is read before the first request, so no lookup waits for it.
  const geo = createGeoReader({ cityDb: config.geoipCityDb, asnDb: config.geoipAsnDb });
  const geoStart = performance.now();
  await geo.load();
  const geoLoadMs = Math.round(performance.now() - geoStart);
  const app = await buildApp({ config, store, geo });
  app.log.info({ ms: geoLoadMs, cityBuildDate: geo.info.cityBuildDate, asnBuildDate: geo.info.asnBuildDate }, 'GeoIP data loaded');
  // The store closes last: app.close() runs the app's onClose hooks, which write the pending
  // usage records and close the rate limiter it built.
  const closeAll = async () => {
    await app.close();
    await store.close();
  };

  await app.listen({ port: config.port, host: config.host });
  // What this instance runs with, in one line and without secrets: the first thing to check
  // when the server does not find the database or the Redis the CLI and the other instances use.
  app.log.info({ config: configSummary(config) }, 'effective configuration');
  const bound = app.server.address();
  await bootstrapFirstAccount(store, config, typeof bound === 'object' && bound ? bound.port : config.port);

  // Requests in flight when the signal lands still get their answer (and are recorded), on a
  // connection that then closes; new ones get a 503 (src/http/plugins/draining.ts). Past the
  // grace the process exits anyway.
  exitOnSignals(app, config.shutdownGraceMs, closeAll, {
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
async function bootstrapFirstAccount(store: Store, config: Config, port: number): Promise<void> {
  const accounts = new AccountService(store);
  if ((await accounts.countAccounts()) > 0) return;
  const { account, token } = await accounts.createAccount({ email: config.adminEmail, name: 'Administrator', plan: 'enterprise', isAdmin: true });
  const base = publicBaseUrl(config, port);
  const link = passwordLinkUrl(base, await new LoginService(store, accounts, config.signup).passwordLink(account.id));
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

/**
 * On SIGTERM or SIGINT (once): logs `start`, runs `close`, and exits 0 when it is done, 1 when it
 * fails (`failed`) or is still running after `graceMs` (`late`).
 */
export function exitOnSignals(app: FastifyInstance, graceMs: number, close: () => Promise<void>, say: { start: string; late: string; failed: string }): void {
  let closing = false;
  const shutdown = (signal: string): void => {
    if (closing) return;
    closing = true;
    app.log.info({ signal, graceS: graceMs / 1000 }, say.start);
    const force = setTimeout(() => {
      app.log.error({ graceS: graceMs / 1000 }, say.late);
      process.exit(1);
    }, graceMs);
    force.unref();
    close().then(
      () => process.exit(0),
      (err: unknown) => {
        app.log.error({ err }, say.failed);
        process.exit(1);
      },
    );
  };
  process.once('SIGTERM', () => shutdown('SIGTERM'));
  process.once('SIGINT', () => shutdown('SIGINT'));
}
