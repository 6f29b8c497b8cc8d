import { Kysely, PostgresDialect, sql } from 'kysely';
import type pg from 'pg';
import { TouchBuffer, asTokenWithAccount, kyselyAccounts, kyselyAuthLinks, kyselyJudge, kyselySessions, kyselyTokens, kyselyWebhookSecrets, tokenByHashQuery } from './kysely-repos.js';
import { migrate } from './migrations.js';
import { kyselyJobs } from './jobs.js';
import { kyselyWebhookDeliveries } from './webhook-deliveries.js';
import { AUTH_CHANNEL, ListenedCache } from './pg-auth-cache.js';
import { CircuitBreaker, guardedPool, isDatabaseUnreachable } from './pg-availability.js';
import { AUTH_CACHE_MAX_ENTRIES } from './auth-cache.js';
import type { DatabaseSchema, UsageDailyTable } from './schema.js';
import type { Account, Token, TokenRepository } from '../../domain/accounts/repositories.js';
import type { Store } from '../../domain/store.js';
import type { UsageRepository, UsageRow } from '../../domain/usage/repository.js';
import { MinutePurge, aggregateMinutes, type MinuteIncrement, aggregateUsage, minuteBounds, utcDayOf } from './usage-aggregate.js';

/** See `writeBatch` in openPostgresStore: a batch's day and minute increments, one statement. */
const USAGE_RECORD_SQL = `
with days as (
  insert into usage_daily as u (account_id, day, endpoint, requests, successful, failed, rate_limited, total_ms)
  select * from unnest($1::integer[], $2::text[], $3::text[], $4::integer[], $5::integer[], $6::integer[], $7::integer[], $8::double precision[])
  on conflict (account_id, day, endpoint) do update set
    requests = u.requests + excluded.requests,
    successful = u.successful + excluded.successful,
    failed = u.failed + excluded.failed,
    rate_limited = u.rate_limited + excluded.rate_limited,
    total_ms = u.total_ms + excluded.total_ms
  returning 1
), minutes as (
  insert into usage_minutes as m (account_id, minute, calls)
  select * from unnest($9::integer[], $10::bigint[], $11::integer[])
  on conflict (account_id, minute) do update set calls = m.calls + excluded.calls
  returning 1
)
select (select count(*) from days) as days, (select count(*) from minutes) as minutes`;

/** Connections one server instance keeps to PostgreSQL. */
export const PG_POOL_SIZE = 10;

export interface PostgresStore extends Store {
  readonly db: Kysely<DatabaseSchema>;
}

/**
 * The PostgreSQL store: the same interface and migrations as SQLite, for several instances
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
  const authCache = new ListenedCache<{ token: Token; account: Account }>(
    connection,
    opts.schema ? `${AUTH_CHANNEL}_${opts.schema}` : AUTH_CHANNEL,
    AUTH_CACHE_MAX_ENTRIES,
  );
  const announce = (trx: Kysely<DatabaseSchema>) => authCache.notify(trx);
  if (opts.schema) await sql`create schema if not exists ${sql.id(opts.schema)}`.execute(db);
  const schema = opts.schema ?? (await sql<{ schema: string }>`select current_schema() as schema`.execute(db)).rows[0]?.schema;
  await migrate(db, 'postgres', schema);

  const touches = new TouchBuffer(async (batch) => {
    await db.transaction().execute(async (trx) => {
      for (const [id, at] of batch) await trx.updateTable('tokens').set({ last_used_at: at }).where('id', '=', id).execute();
    });
  });

  const lookup = async (hash: string) => {
    const r = await tokenByHashQuery(db, hash).executeTakeFirst();
    return r && asTokenWithAccount(r);
  };
  const tokens: TokenRepository = {
    ...kyselyTokens(db, undefined, announce),
    findByHash: (hash) => authCache.find(hash, () => lookup(hash)),
    touch(id, at) {
      touches.touch(id, at);
    },
  };

  /**
   * The usage write of nearly every batch: the day rows and the minute rows as arrays, unnested
   * by one prepared statement (the same text whatever the batch's size, so PostgreSQL parses and
   * plans it once per connection). Its data-modifying parts are one statement, so one transaction.
   */
  const writeBatch = async (days: readonly UsageDailyTable[], minutes: readonly MinuteIncrement[]) => {
    const values: unknown[][] = [[], [], [], [], [], [], [], [], [], [], []];
    for (const r of days) {
      values[0]!.push(r.account_id);
      values[1]!.push(r.day);
      values[2]!.push(r.endpoint);
      values[3]!.push(r.requests);
      values[4]!.push(r.successful);
      values[5]!.push(r.failed);
      values[6]!.push(r.rate_limited);
      values[7]!.push(r.total_ms);
    }
    for (const m of minutes) {
      values[8]!.push(m.account_id);
      values[9]!.push(m.minute);
      values[10]!.push(m.calls);
    }
    const client = (await pool.connect()) as unknown as pg.PoolClient;
    try {
      await client.query({ name: 'netdiag_usage_record', text: USAGE_RECORD_SQL, values });
      client.release();
    } catch (err) {
      // A connection that failed or timed out mid-statement is not given back to the pool.
      client.release(isDatabaseUnreachable(err) ? (err as Error) : undefined);
      throw err;
    }
  };

  const minutePurge = new MinutePurge();
  const usage: UsageRepository = {
    async record(records) {
      const rows = aggregateUsage(records);
      if (rows.length === 0) return;
      const minutes = aggregateMinutes(records);
      const cutoff = minutePurge.due(minutes.latest);
      const writeDays = (q: Kysely<DatabaseSchema>) =>
        // One statement for the whole batch; the conflict clause adds to the existing aggregate.
        q
          .insertInto('usage_daily')
          .values(rows)
          .onConflict((oc) =>
            oc.columns(['account_id', 'day', 'endpoint']).doUpdateSet({
              requests: sql`usage_daily.requests + excluded.requests`,
              successful: sql`usage_daily.successful + excluded.successful`,
              failed: sql`usage_daily.failed + excluded.failed`,
              rate_limited: sql`usage_daily.rate_limited + excluded.rate_limited`,
              total_ms: sql`usage_daily.total_ms + excluded.total_ms`,
            }),
          )
          .execute();
      // Without a purge due (all but one batch a minute): one prepared statement, the day rows
      // and the minute rows in one go (a statement is a transaction of its own), one round trip
      // instead of four.
      if (cutoff === undefined) {
        await writeBatch(rows, minutes.rows);
        return;
      }
      // The day rows and the minute rows are one transaction: the rate windows' record never
      // disagrees with the analytics.
      await db.transaction().execute(async (trx) => {
        await writeDays(trx);
        if (minutes.rows.length > 0) {
          await trx
            .insertInto('usage_minutes')
            .values(minutes.rows)
            .onConflict((oc) => oc.columns(['account_id', 'minute']).doUpdateSet({ calls: sql`usage_minutes.calls + excluded.calls` }))
            .execute();
        }
        if (cutoff !== undefined) await trx.deleteFrom('usage_minutes').where('minute', '<', cutoff).execute();
      });
    },
    async rows(accountId, fromDay, toDay) {
      const rows = await db
        .selectFrom('usage_daily')
        .select(['day', 'endpoint', 'requests', 'successful', 'failed', 'rate_limited', 'total_ms'])
        .where('account_id', '=', accountId)
        .where('day', '>=', fromDay)
        .where('day', '<=', toDay)
        .orderBy('day')
        .orderBy('endpoint')
        .execute();
      return rows.map((r): UsageRow => ({
        day: r.day,
        endpoint: r.endpoint,
        requests: Number(r.requests),
        successful: Number(r.successful),
        failed: Number(r.failed),
        rate_limited: Number(r.rate_limited),
        total_ms: Number(r.total_ms),
      }));
    },
    async callsOn(accountId, day) {
      const row = await db
        .selectFrom('usage_daily')
        .select(sql<string>`coalesce(sum(successful + failed), 0)`.as('n'))
        .where('account_id', '=', accountId)
        .where('day', '=', day)
        .executeTakeFirstOrThrow();
      return Number(row.n);
    },
    async windowCounts(accountId, now) {
      const b = minuteBounds(now);
      const [r, day] = await Promise.all([
        db
          .selectFrom('usage_minutes')
          .select([
            sql<string>`coalesce(sum(case when minute = ${b.minute} then calls else 0 end), 0)`.as('minute'),
            sql<string>`coalesce(sum(calls), 0)`.as('hour'),
          ])
          .where('account_id', '=', accountId)
          .where('minute', '>=', b.hour)
          .where('minute', '<=', b.minute)
          .executeTakeFirstOrThrow(),
        usage.callsOn(accountId, utcDayOf(now)),
      ]);
      return { minute: Number(r.minute), hour: Number(r.hour), day };
    },
  };

  return {
    kind: 'postgres',
    db,
    accounts: kyselyAccounts(db, undefined, announce),
    tokens,
    usage,
    judge: kyselyJudge(db),
    sessions: kyselySessions(db),
    authLinks: kyselyAuthLinks(db),
    webhookSecrets: kyselyWebhookSecrets(db),
    jobs: kyselyJobs(db, 'postgres'),
    webhookDeliveries: kyselyWebhookDeliveries(db),
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
