import { Kysely, PostgresDialect, sql } from 'kysely';
import { migrate } from './migrations.js';
import { AUTH_CHANNEL, ListenedCache } from './pg-auth-cache.js';
import { CircuitBreaker, guardedPool } from './pg-availability.js';
import { repositories } from './repositories.js';
import type { DatabaseSchema } from './schema.js';
import type { Store } from '../../domain/store.js';
import { AUTH_CACHE_MAX_ENTRIES } from './auth-cache.js';
import { TouchBuffer, writeTouches } from './tokens.js';
import type { Authenticated } from './auth-cache.js';

/** Connections one server instance keeps to PostgreSQL. */
export const PG_POOL_SIZE = 10;

export interface PostgresStore extends Store {
  readonly db: Kysely<DatabaseSchema>;
}

/**
 * The PostgreSQL store: the same repositories and migrations as SQLite, for several instances
 * sharing one database. Authentication is cached in memory and the cache dropped by LISTEN/NOTIFY
 * (see ListenedCache), so a revocation by another instance or the CLI is seen at once.
 * While the database cannot be reached, calls fail fast (see pg-availability.ts) and nothing
 * ends the process. `schema` (tests) puts every table, and the notification channel, in its own
 * schema's name.
 */
export async function openPostgresStore(url: string, opts: { schema?: string } = {}): Promise<PostgresStore> {
  const connection = { connectionString: url, ...(opts.schema ? { options: `-c search_path=${opts.schema}` } : {}) };
  const breaker = new CircuitBreaker();
  const { pool } = guardedPool({ ...connection, max: PG_POOL_SIZE }, breaker);
  const db = new Kysely<DatabaseSchema>({ dialect: new PostgresDialect({ pool }) });
  const authCache = new ListenedCache<Authenticated>(connection, opts.schema ? `${AUTH_CHANNEL}_${opts.schema}` : AUTH_CHANNEL, AUTH_CACHE_MAX_ENTRIES);
  if (opts.schema) await sql`create schema if not exists ${sql.id(opts.schema)}`.execute(db);
  const schema = opts.schema ?? (await sql<{ schema: string }>`select current_schema() as schema`.execute(db)).rows[0]?.schema;
  await migrate(db, 'postgres', schema);

  const touches = new TouchBuffer(writeTouches(db));
  return {
    kind: 'postgres',
    db,
    ...repositories(db, 'postgres', authCache, touches),
    async ping() {
      await sql`select 1`.execute(db);
    },
    onBackgroundError(listener) {
      touches.onError = listener;
    },
    async close() {
      await authCache.close();
      // An unreachable database must not keep the process from closing: the touches are informational.
      await touches.close().catch(() => {});
      await db.destroy();
    },
  };
}
