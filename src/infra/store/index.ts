import type { Store } from './store.js';
import { openSqliteStore } from './sqlite.js';
import { openPostgresStore } from './postgres.js';

export type { Store } from './store.js';

/** Opens the store named by DATABASE_URL. */
export async function openStore(databaseUrl: string): Promise<Store> {
  if (databaseUrl.startsWith('sqlite:')) {
    return openSqliteStore(databaseUrl.slice('sqlite:'.length));
  }
  return openPostgresStore(databaseUrl);
}
