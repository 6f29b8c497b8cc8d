import Database from 'better-sqlite3';
import { mkdirSync } from 'node:fs';
import { dirname } from 'node:path';
import { Kysely, SqliteDialect } from 'kysely';
import { migrate } from './migrations.js';
import { repositories } from './repositories.js';
import type { DatabaseSchema } from './schema.js';
import { DataVersionCache } from './sqlite-auth-cache.js';
import type { Store } from '../../domain/store.js';
import { TouchBuffer, writeTouches } from './tokens.js';

/** How long a writer waits for another process (the CLI) holding the write lock. */
export const SQLITE_BUSY_TIMEOUT_MS = 5_000;

export interface SqliteStore extends Store {
  readonly db: Kysely<DatabaseSchema>;
  /** The raw connection (tests close it under the store to make it fail). */
  readonly sqlite: Database.Database;
}

/** The SQLite store: one file, one connection, the repositories of repositories.ts over it. */
export async function openSqliteStore(path: string): Promise<SqliteStore> {
  if (path !== ':memory:') mkdirSync(dirname(path), { recursive: true });
  const sqlite = new Database(path);
  sqlite.pragma('journal_mode = WAL');
  // NORMAL keeps every committed transaction across a process crash (kill -9); only an OS
  // crash or power loss can drop the last transactions, which FULL would guard at ~6x the cost.
  sqlite.pragma('synchronous = NORMAL');
  sqlite.pragma('foreign_keys = ON');
  sqlite.pragma(`busy_timeout = ${SQLITE_BUSY_TIMEOUT_MS}`);

  const db = new Kysely<DatabaseSchema>({ dialect: new SqliteDialect({ database: sqlite }) });
  await migrate(db, 'sqlite');

  const touches = new TouchBuffer(writeTouches(db));
  return {
    kind: 'sqlite',
    db,
    sqlite,
    ...repositories(db, 'sqlite', new DataVersionCache(sqlite), touches),
    async ping() {
      sqlite.prepare('select 1').get();
    },
    onBackgroundError(listener) {
      touches.onError = listener;
    },
    async close() {
      await touches.close();
      await db.destroy();
    },
  };
}
