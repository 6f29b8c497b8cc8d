import type { Store } from './store.js';
import { openSqliteStore } from './sqlite.js';

export type { Store } from './store.js';

/** Opens the store named by DATABASE_URL. */
export async function openStore(databaseUrl: string): Promise<Store> {
  if (databaseUrl.startsWith('sqlite:')) {
    return openSqliteStore(databaseUrl.slice('sqlite:'.length));
  }
  throw new Error(`DATABASE_URL: the PostgreSQL store is not available yet; use sqlite:<path>`);
}
