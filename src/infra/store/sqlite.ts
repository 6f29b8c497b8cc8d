import Database from 'better-sqlite3';
import { mkdirSync } from 'node:fs';
import { dirname } from 'node:path';
import { Kysely, Migrator, SqliteDialect, type MigrationProvider } from 'kysely';
import { migrations } from './migrations.js';
import type { DatabaseSchema } from './schema.js';
import type { Account, AccountRepository, Store, Token, TokenRepository, UsageRecord, UsageRepository, UsageRow } from './store.js';
import { aggregateUsage } from './usage-aggregate.js';

/** How often batched last_used_at updates reach the database. */
export const TOKEN_TOUCH_FLUSH_MS = 5_000;
/** Bound on cached authentication results; the cache is simply dropped when full. */
export const AUTH_CACHE_MAX_ENTRIES = 10_000;
/** How long a writer waits for another process (the CLI) holding the write lock. */
export const SQLITE_BUSY_TIMEOUT_MS = 5_000;

const ACCOUNT_COLUMNS = ['id', 'name', 'email', 'plan', 'status', 'created_at'] as const;
const TOKEN_COLUMNS = ['id', 'account_id', 'label', 'created_at', 'last_used_at', 'revoked_at'] as const;

function asAccount(row: Record<string, unknown>): Account {
  return row as unknown as Account;
}

export interface SqliteStore extends Store {
  readonly db: Kysely<DatabaseSchema>;
  /** The raw connection, for prepared statements on hot paths (usage recording). */
  readonly sqlite: Database.Database;
}

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

  // The authentication hot path: one indexed lookup, prepared once.
  const byHash = sqlite.prepare(
    `select t.id as t_id, t.account_id, t.label, t.created_at as t_created_at, t.last_used_at, t.revoked_at,
            a.id, a.name, a.email, a.plan, a.status, a.created_at
       from tokens t join accounts a on a.id = t.account_id where t.hash = ?`,
  );
  // Authentication results are cached in memory. Another process (the CLI revoking a token or
  // suspending an account) commits through its own connection, which bumps SQLite's
  // data_version; checking that one cheap pragma per lookup keeps revocation immediate.
  const dataVersion = sqlite.prepare('PRAGMA data_version').pluck();
  let seenVersion = dataVersion.get() as number;
  const authCache = new Map<string, { token: Token; account: Account } | undefined>();
  const freshCache = () => {
    const version = dataVersion.get() as number;
    if (version !== seenVersion) {
      seenVersion = version;
      authCache.clear();
    }
    return authCache;
  };
  const touchStmt = sqlite.prepare('update tokens set last_used_at = ? where id = ?');
  const pendingTouches = new Map<number, string>();
  const flushTouches = () => {
    if (pendingTouches.size === 0) return;
    sqlite.transaction(() => {
      for (const [id, at] of pendingTouches) touchStmt.run(at, id);
    })();
    pendingTouches.clear();
  };
  const flushTimer = setInterval(flushTouches, TOKEN_TOUCH_FLUSH_MS);
  flushTimer.unref();

  const accounts: AccountRepository = {
    async create(account) {
      const row = await db
        .insertInto('accounts')
        .values({ ...account, status: 'active' })
        .returning(ACCOUNT_COLUMNS)
        .executeTakeFirstOrThrow();
      return asAccount(row);
    },
    async findById(id) {
      const row = await db.selectFrom('accounts').select(ACCOUNT_COLUMNS).where('id', '=', id).executeTakeFirst();
      return row && asAccount(row);
    },
    async findByEmail(email) {
      const row = await db.selectFrom('accounts').select(ACCOUNT_COLUMNS).where('email', '=', email).executeTakeFirst();
      return row && asAccount(row);
    },
    async list() {
      return (await db.selectFrom('accounts').select(ACCOUNT_COLUMNS).orderBy('id').execute()).map(asAccount);
    },
    async count() {
      const row = await db.selectFrom('accounts').select((eb) => eb.fn.countAll<number>().as('n')).executeTakeFirstOrThrow();
      return Number(row.n);
    },
    async update(id, changes) {
      authCache.clear();
      const row = await db
        .updateTable('accounts')
        .set(changes)
        .where('id', '=', id)
        .returning(ACCOUNT_COLUMNS)
        .executeTakeFirst();
      return row && asAccount(row);
    },
  };

  const tokens: TokenRepository = {
    async create(token) {
      return (await db.insertInto('tokens').values(token).returning(TOKEN_COLUMNS).executeTakeFirstOrThrow()) as Token;
    },
    async findByHash(hash) {
      const cache = freshCache();
      if (cache.has(hash)) return cache.get(hash);
      const r = byHash.get(hash) as Record<string, unknown> | undefined;
      // Unknown hashes are not cached: guessing must not grow memory.
      if (!r) return undefined;
      if (cache.size >= AUTH_CACHE_MAX_ENTRIES) cache.clear();
      const found = {
        token: {
          id: r.t_id as number,
          account_id: r.account_id as number,
          label: r.label as string,
          created_at: r.t_created_at as string,
          last_used_at: r.last_used_at as string | null,
          revoked_at: r.revoked_at as string | null,
        },
        account: asAccount({ id: r.id, name: r.name, email: r.email, plan: r.plan, status: r.status, created_at: r.created_at }),
      };
      cache.set(hash, found);
      return found;
    },
    async findById(id) {
      return (await db.selectFrom('tokens').select(TOKEN_COLUMNS).where('id', '=', id).executeTakeFirst()) as
        | Token
        | undefined;
    },
    async listByAccount(accountId) {
      return (await db
        .selectFrom('tokens')
        .select(TOKEN_COLUMNS)
        .where('account_id', '=', accountId)
        .orderBy('id')
        .execute()) as Token[];
    },
    async revoke(id, at) {
      authCache.clear();
      return (await db
        .updateTable('tokens')
        .set({ revoked_at: at })
        .where('id', '=', id)
        .where('revoked_at', 'is', null)
        .returning(TOKEN_COLUMNS)
        .executeTakeFirst()) as Token | undefined;
    },
    touch(id, at) {
      pendingTouches.set(id, at);
    },
  };

  // Usage recording is the one write on every request: prepared once, batched by the caller.
  const upsertUsage = sqlite.prepare(
    `insert into usage_daily (account_id, day, endpoint, requests, successful, failed, rate_limited, total_ms)
     values (@account_id, @day, @endpoint, @requests, @successful, @failed, @rate_limited, @total_ms)
     on conflict (account_id, day, endpoint) do update set
       requests = requests + excluded.requests, successful = successful + excluded.successful,
       failed = failed + excluded.failed, rate_limited = rate_limited + excluded.rate_limited,
       total_ms = total_ms + excluded.total_ms`,
  );
  const recordUsage = sqlite.transaction((records: readonly UsageRecord[]) => {
    for (const row of aggregateUsage(records)) upsertUsage.run(row);
  });
  const usageRows = sqlite.prepare(
    `select day, endpoint, requests, successful, failed, rate_limited, total_ms from usage_daily
      where account_id = ? and day between ? and ? order by day, endpoint`,
  );
  const callsOn = sqlite.prepare('select coalesce(sum(successful + failed), 0) from usage_daily where account_id = ? and day = ?').pluck();

  const usage: UsageRepository = {
    async record(records) {
      if (records.length > 0) recordUsage(records);
    },
    async rows(accountId, fromDay, toDay) {
      return usageRows.all(accountId, fromDay, toDay) as UsageRow[];
    },
    async callsOn(accountId, day) {
      return Number(callsOn.get(accountId, day));
    },
  };

  return {
    kind: 'sqlite',
    db,
    sqlite,
    accounts,
    tokens,
    usage,
    async ping() {
      sqlite.prepare('select 1').get();
    },
    async close() {
      clearInterval(flushTimer);
      flushTouches();
      await db.destroy();
    },
  };
}

export async function migrate<T>(db: Kysely<T>, dialect: 'sqlite' | 'postgres'): Promise<void> {
  const provider: MigrationProvider = { getMigrations: async () => migrations(dialect) };
  const { error, results } = await new Migrator({ db, provider }).migrateToLatest();
  if (error) {
    const failed = results?.find((r) => r.status === 'Error')?.migrationName ?? 'unknown';
    throw new Error(`database migration ${failed} failed: ${error instanceof Error ? error.message : String(error)}`);
  }
}
