import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import pg from 'pg';
import { openPostgresStore } from '../../../src/infra/store/postgres.js';
import { openSqliteStore } from '../../../src/infra/store/sqlite.js';
import type { TestContext } from 'node:test';
import type { Account } from '../../../src/domain/accounts/repositories.js';
import type { Store } from '../../../src/domain/store.js';

/** A database of each backend for the shared suites: a fresh one per call, removed by `drop`. */
export interface Backend {
  name: string;
  /** Opens a store; a second call opens another connection to the same database. */
  open(): Promise<Store>;
  drop(): Promise<void>;
}

export const TEST_DATABASE_URL = process.env.TEST_DATABASE_URL;
let n = 0;

export function sqliteBackend(): Backend {
  const dir = mkdtempSync(join(tmpdir(), 'netdiag-store-'));
  return {
    name: 'sqlite',
    open: () => openSqliteStore(join(dir, 'store.db')),
    drop: async () => rmSync(dir, { recursive: true, force: true }),
  };
}

/** A fresh SQLite store, closed and removed when the test ends, with one pro account in it. */
export async function sqliteStoreWithAccount(t: TestContext): Promise<{ store: Store; account: Account }> {
  const backend = sqliteBackend();
  const store = await backend.open();
  t.after(async () => {
    await store.close();
    await backend.drop();
  });
  const account = await store.accounts.create({ name: 'a', email: 'a@example.com', plan: 'pro', created_at: new Date().toISOString() });
  return { store, account };
}

/** A schema of its own in TEST_DATABASE_URL, so parallel test files never see each other. */
export function postgresBackend(url: string): Backend & { schema: string } {
  const schema = `nd_test_${process.pid}_${Date.now()}_${n++}`;
  return {
    name: 'postgres',
    schema,
    open: () => openPostgresStore(url, { schema }),
    drop: async () => {
      const client = new pg.Client({ connectionString: url });
      await client.connect();
      await client.query(`drop schema if exists "${schema}" cascade`);
      await client.end();
    },
  };
}
