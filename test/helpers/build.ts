import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { TestContext } from 'node:test';
import type { FastifyInstance } from 'fastify';
import { composeApp, type AppDeps } from '../../src/compose-app.js';
import { loadConfig, type Config } from '../../src/config.js';
import { AccountService } from '../../src/domain/accounts/service.js';
import { openSqliteStore, type SqliteStore } from '../../src/infra/store/sqlite.js';
import { checkResponses } from './contract.js';

export interface Built {
  app: FastifyInstance;
  store: SqliteStore;
  accounts: AccountService;
  config: Config;
  dbPath: string;
  /** A token of an active account (enterprise unless `plan` says otherwise) created for the test. */
  token: string;
  /** Base URL of the app listening on 127.0.0.1, port 0. */
  url: string;
  /** fetch against the app with the test token unless headers say otherwise. */
  api: (path: string, init?: RequestInit & { json?: unknown; token?: string | null }) => Promise<Response>;
}

/** A temporary directory removed when the test ends. */
export function tempDir(t: TestContext, prefix = 'netdiag-'): string {
  const dir = mkdtempSync(join(tmpdir(), prefix));
  t.after(() => rmSync(dir, { recursive: true, force: true }));
  return dir;
}

/**
 * The real app over a real SQLite file, listening on 127.0.0.1:0, closed when the test ends.
 * `env` adds configuration variables; `deps` replaces collaborators.
 */
export async function build(
  t: TestContext,
  opts: {
    env?: Record<string, string>;
    deps?: Partial<AppDeps>;
    plan?: string;
    /** Routes only a test needs, added before the app starts listening. */
    extraRoutes?: (app: FastifyInstance) => void;
  } = {},
): Promise<Built> {
  const dir = tempDir(t);
  const dbPath = join(dir, 'netdiag.db');
  const config = loadConfig({ DATABASE_URL: `sqlite:${dbPath}`, NETDIAG_DNS_SERVERS: '127.0.0.1:1', ...opts.env });
  const store = await openSqliteStore(dbPath);
  const accounts = new AccountService(store, opts.deps?.clock);
  const { token } = await accounts.createAccount({ email: 'tester@example.com', name: 'Tester', plan: opts.plan ?? 'enterprise' });
  const app = await composeApp({ config, store, logger: false, ...opts.deps });
  checkResponses(t, app, { rateLimited: opts.deps?.limiter !== null });
  t.after(async () => {
    await app.close();
    await store.close();
  });
  opts.extraRoutes?.(app);
  await app.listen({ port: 0, host: '127.0.0.1' });
  const address = app.server.address();
  const url = typeof address === 'object' && address ? `http://127.0.0.1:${address.port}` : '';
  const api: Built['api'] = (path, init = {}) => {
    const { json, token: tokenOverride, ...rest } = init;
    const headers = new Headers(rest.headers);
    const useToken = tokenOverride === undefined ? token : tokenOverride;
    if (useToken !== null && !headers.has('authorization')) headers.set('authorization', `Bearer ${useToken}`);
    if (json !== undefined) {
      if (!headers.has('content-type')) headers.set('content-type', 'application/json');
      return fetch(url + path, { method: 'POST', ...rest, headers, body: JSON.stringify(json) });
    }
    return fetch(url + path, { ...rest, headers });
  };
  return { app, store, accounts, config, dbPath, token, url, api };
}
