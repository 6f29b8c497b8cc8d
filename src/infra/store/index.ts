import type { Store } from '../../domain/store.js';
import { openSqliteStore } from './sqlite.js';
import { openPostgresStore } from './postgres.js';

/** Opens the store named by DATABASE_URL. */
export async function openStore(databaseUrl: string): Promise<Store> {
  if (databaseUrl.startsWith('sqlite:')) {
    return openSqliteStore(databaseUrl.slice('sqlite:'.length));
  }
  return openPostgresStore(databaseUrl);
}
