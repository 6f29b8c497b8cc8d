import type { FastifyInstance } from 'fastify';
import { buildApp } from './app.js';
import { compose, type ComposeOptions } from './compose.js';
import type { Config } from './config.js';
import type { Store } from './domain/store.js';

/** What tests and benchmarks give composeApp: the configuration, their store, and what they replace. */
export interface AppDeps extends ComposeOptions {
  config: Config;
  store: Store;
}

/**
 * compose and buildApp in one, for tests and benchmarks that give their own store: the graph
 * starts when the app is ready and closes with it (the store stays theirs to close).
 */
export async function composeApp(deps: AppDeps): Promise<FastifyInstance> {
  const { config, ...opts } = deps;
  const services = await compose(config, opts);
  const app = await buildApp(services);
  app.addHook('onReady', async () => services.start());
  app.addHook('onClose', async () => services.close());
  return app;
}
