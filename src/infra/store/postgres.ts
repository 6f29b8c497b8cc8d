import { Kysely, PostgresDialect, sql } from 'kysely';
import { TouchBuffer, asAccount, asToken, kyselyAccounts, kyselyAuthLinks, kyselyJudge, kyselySessions, kyselyTokens, kyselyWebhookSecrets } from './kysely-repos.js';
import { migrate } from './migrations.js';
import { AUTH_CHANNEL, ListenedCache } from './pg-auth-cache.js';
import { CircuitBreaker, guardedPool } from './pg-availability.js';
import { AUTH_CACHE_MAX_ENTRIES } from './store.js';
import type { DatabaseSchema } from './schema.js';
import type { Account, Store, Token, TokenRepository, UsageRepository, UsageRow } from './store.js';
import { MinutePurge, aggregateMinutes, aggregateUsage, minuteBounds, utcDayOf } from './usage-aggregate.js';

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
    const r = await db
      .selectFrom('tokens as t')
      .innerJoin('accounts as a', 'a.id', 't.account_id')
      .select([
        't.id as t_id',
        't.account_id',
        't.label',
        't.prefix',
        't.created_at as t_created_at',
        't.last_used_at',
        't.revoked_at',
        't.expires_at',
        'a.id',
        'a.name',
        'a.email',
        'a.plan',
        'a.status',
        'a.created_at',
        'a.is_admin',
      ])
      .where('t.hash', '=', hash)
      .executeTakeFirst();
    if (!r) return undefined;
    return { token: asToken({ ...r, id: r.t_id, created_at: r.t_created_at }), account: asAccount(r) };
  };
  const tokens: TokenRepository = {
    ...kyselyTokens(db, undefined, announce),
    findByHash: (hash) => authCache.find(hash, () => lookup(hash)),
    touch(id, at) {
      touches.touch(id, at);
    },
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
      // A batch of 429s only (no calls, no purge due) stays one statement, with no transaction.
      if (minutes.rows.length === 0 && cutoff === undefined) {
        await writeDays(db);
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
