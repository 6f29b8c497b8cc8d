import Database from 'better-sqlite3';
import { mkdirSync } from 'node:fs';
import { dirname } from 'node:path';
import { Kysely, SqliteDialect, type SqliteDatabase } from 'kysely';
import { migrate } from './migrations.js';
import { kyselyJobs } from './jobs.js';
import type { JobItemBatch, JobRepository } from '../../domain/jobs/repository.js';
import { kyselyWebhookDeliveries } from './webhook-deliveries.js';
import type { DatabaseSchema } from './schema.js';
import { AUTH_CACHE_MAX_ENTRIES } from './auth-cache.js';
import type { Account, AccountRepository, Token, TokenRepository } from '../../domain/accounts/repositories.js';
import type { JudgeRepository } from '../../domain/proxy/judge-repository.js';
import type { Store } from '../../domain/store.js';
import type { UsageRecord, UsageRepository, UsageRow } from '../../domain/usage/repository.js';
import { MinutePurge, aggregateMinutes, aggregateUsage, minuteBounds, utcDayOf } from './usage-aggregate.js';
import {
  TouchBuffer,
  asSessionWithAccount,
  asTokenWithAccount,
  kyselyAccounts,
  kyselyAuthLinks,
  kyselyJudge,
  kyselySessions,
  kyselyTokens,
  kyselyWebhookSecrets,
  sessionByIdQuery,
  tokenByHashQuery,
} from './kysely-repos.js';

/** How long a writer waits for another process (the CLI) holding the write lock. */
export const SQLITE_BUSY_TIMEOUT_MS = 5_000;

export interface SqliteStore extends Store {
  readonly db: Kysely<DatabaseSchema>;
  /** The raw connection, for prepared statements on hot paths (usage recording). */
  readonly sqlite: Database.Database;
}

/** Distinct statements kept prepared for Kysely; past it they start over (lists of `?` make many). */
export const SQLITE_STATEMENT_CACHE = 500;

/**
 * The connection as Kysely's SQLite dialect sees it, with each statement prepared once per SQL
 * text: the dialect prepares every query it runs, and preparing cost more than running for the
 * job queue's queries (a claim's window function: ~0.2 ms to prepare, per poll). Kysely never
 * streams here (no iterate), so a statement is never in use when it is handed out again.
 */
function preparedOnce(sqlite: Database.Database): SqliteDatabase {
  const statements = new Map<string, Database.Statement>();
  return {
    prepare(sql) {
      let stmt = statements.get(sql);
      if (!stmt) {
        if (statements.size >= SQLITE_STATEMENT_CACHE) statements.clear();
        stmt = sqlite.prepare(sql);
        statements.set(sql, stmt);
      }
      return stmt;
    },
    close: () => sqlite.close(),
  };
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

  const db = new Kysely<DatabaseSchema>({ dialect: new SqliteDialect({ database: preparedOnce(sqlite) }) });
  await migrate(db, 'sqlite');

  // The authentication hot path and every dashboard page's session: one indexed lookup each,
  // the shared queries compiled and prepared once.
  const byHash = sqlite.prepare(tokenByHashQuery(db, '').compile().sql);
  const sessionById = sqlite.prepare(sessionByIdQuery(db, '').compile().sql);
  // Authentication results are cached in memory. Another process (the CLI revoking a token or
  // suspending an account) commits through its own connection, which bumps SQLite's
  // data_version. It is read once per turn of the event loop: every request handled in a turn
  // was received before that read, so a revocation that completed before a request was sent is
  // always seen by it.
  const dataVersion = sqlite.prepare('PRAGMA data_version').pluck();
  let seenVersion = dataVersion.get() as number;
  let checkedThisTurn = false;
  const authCache = new Map<string, { token: Token; account: Account } | undefined>();
  const freshCache = () => {
    if (!checkedThisTurn) {
      checkedThisTurn = true;
      setImmediate(() => (checkedThisTurn = false));
      const version = dataVersion.get() as number;
      if (version !== seenVersion) {
        seenVersion = version;
        authCache.clear();
      }
    }
    return authCache;
  };
  const touchStmt = sqlite.prepare('update tokens set last_used_at = ? where id = ?');
  const touches = new TouchBuffer(
    sqlite.transaction((batch: Array<[number, string]>) => {
      for (const [id, at] of batch) touchStmt.run(at, id);
    }),
  );

  const dropAuthCache = () => authCache.clear();
  const accounts: AccountRepository = kyselyAccounts(db, dropAuthCache);

  const tokens: TokenRepository = {
    ...kyselyTokens(db, dropAuthCache),
    // Synchronous: better-sqlite3 is, and a cached token is the common case.
    findByHash(hash) {
      const cache = freshCache();
      if (cache.has(hash)) return cache.get(hash);
      const r = byHash.get(hash) as Record<string, unknown> | undefined;
      // Unknown hashes are not cached: guessing must not grow memory.
      if (!r) return undefined;
      if (cache.size >= AUTH_CACHE_MAX_ENTRIES) cache.clear();
      const found = asTokenWithAccount(r);
      cache.set(hash, found);
      return found;
    },
    touch(id, at) {
      touches.touch(id, at);
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
  // Calls per minute, in the same transaction as the day rows: the rate windows' record.
  const upsertMinute = sqlite.prepare(
    `insert into usage_minutes (account_id, minute, calls) values (@account_id, @minute, @calls)
     on conflict (account_id, minute) do update set calls = calls + excluded.calls`,
  );
  const purgeMinutes = sqlite.prepare('delete from usage_minutes where minute < ?');
  const minutePurge = new MinutePurge();
  const recordUsage = sqlite.transaction((records: readonly UsageRecord[]) => {
    for (const row of aggregateUsage(records)) upsertUsage.run(row);
    const minutes = aggregateMinutes(records);
    for (const row of minutes.rows) upsertMinute.run(row);
    const cutoff = minutePurge.due(minutes.latest);
    if (cutoff !== undefined) purgeMinutes.run(cutoff);
  });
  const usageRows = sqlite.prepare(
    `select day, endpoint, requests, successful, failed, rate_limited, total_ms from usage_daily
      where account_id = ? and day between ? and ? order by day, endpoint`,
  );
  const callsOn = sqlite.prepare('select coalesce(sum(successful + failed), 0) from usage_daily where account_id = ? and day = ?').pluck();
  const minuteAndHour = sqlite.prepare(
    `select coalesce(sum(case when minute = @minute then calls else 0 end), 0) as minute, coalesce(sum(calls), 0) as hour
       from usage_minutes where account_id = @account_id and minute >= @hour and minute <= @minute`,
  );

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
    async windowCounts(accountId, now) {
      const r = minuteAndHour.get({ account_id: accountId, ...minuteBounds(now) }) as { minute: number; hour: number };
      return { minute: Number(r.minute), hour: Number(r.hour), day: Number(callsOn.get(accountId, utcDayOf(now))) };
    },
  };

  // The judge spends a nonce use a few times per proxy check: prepared once, like usage.
  const spendNonce = sqlite.prepare('insert into judge_nonce_uses (id, kind, expires_at) values (?, ?, ?) on conflict do nothing');
  const judge: JudgeRepository = {
    ...kyselyJudge(db),
    async spend(id, use, expiresAt) {
      return spendNonce.run(id, use, expiresAt).changes === 1;
    },
  };

  // A job's items are its heaviest writes and what its streams read back: prepared once, like
  // usage, where a Kysely query costs more than the rows.
  const jobProgress = sqlite.prepare("update jobs set progress_done = ? where id = ? and status = 'running' and lease_owner = ?");
  const insertJobItems = sqlite.prepare('insert into job_item_batches (job_id, first_seq, last_seq, lines) values (?, ?, ?, ?)');
  const addJobItems = sqlite.transaction((id: string, owner: string, batch: JobItemBatch, done: number): boolean => {
    if (jobProgress.run(done, id, owner).changes === 0) return false;
    insertJobItems.run(id, batch.first_seq, batch.last_seq, batch.lines);
    return true;
  });
  const jobItemsAfter = sqlite.prepare('select first_seq, last_seq, lines from job_item_batches where job_id = ? and last_seq > ? order by first_seq limit ?');
  const jobs: JobRepository = {
    ...kyselyJobs(db),
    async addItems(id, owner, batch, done) {
      return addJobItems(id, owner, batch, done);
    },
    async itemBatches(jobId, afterSeq, limit) {
      return jobItemsAfter.all(jobId, afterSeq, limit) as JobItemBatch[];
    },
  };

  return {
    kind: 'sqlite',
    db,
    sqlite,
    accounts,
    tokens,
    usage,
    judge,
    sessions: {
      ...kyselySessions(db),
      async find(id) {
        const r = sessionById.get(id) as Record<string, unknown> | undefined;
        return r && asSessionWithAccount(r);
      },
    },
    authLinks: kyselyAuthLinks(db),
    webhookSecrets: kyselyWebhookSecrets(db),
    jobs,
    webhookDeliveries: kyselyWebhookDeliveries(db),
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
