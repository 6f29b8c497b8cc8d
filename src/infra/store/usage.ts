import { sql, type Kysely, type QueryCreator } from 'kysely';
import type { DatabaseSchema, UsageDailyTable } from './schema.js';
import type { Store } from '../../domain/store.js';
import type { UsageRepository, UsageRow } from '../../domain/usage/repository.js';
import { MinutePurge, aggregateMinutes, aggregateUsage, minuteBounds, utcDayOf, type MinuteIncrement } from './usage-aggregate.js';

/**
 * Rows per upsert statement: a batch of more distinct (account, day, endpoint) rows is written
 * in several, inside the batch's transaction (8 parameters a row stays under both databases'
 * limits on a statement's parameters).
 */
export const USAGE_ROWS_PER_STATEMENT = 1_000;

/** Adds the day rows to their aggregates: the conflict clause adds to the existing row. */
function upsertDays(q: QueryCreator<DatabaseSchema>, rows: readonly UsageDailyTable[]) {
  return q
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
    );
}

/** Adds calls per minute: the rate windows' record. */
function upsertMinutes(q: QueryCreator<DatabaseSchema>, rows: readonly MinuteIncrement[]) {
  return q
    .insertInto('usage_minutes')
    .values(rows)
    .onConflict((oc) => oc.columns(['account_id', 'minute']).doUpdateSet({ calls: sql`usage_minutes.calls + excluded.calls` }));
}

function chunks<T>(rows: readonly T[]): T[][] {
  const out: T[][] = [];
  for (let i = 0; i < rows.length; i += USAGE_ROWS_PER_STATEMENT) out.push(rows.slice(i, i + USAGE_ROWS_PER_STATEMENT));
  return out;
}

/**
 * Usage analytics and the rate windows' record. A batch (the usage group commit's) is folded
 * into one increment per (account, day, endpoint) and per (account, minute), written with the
 * day rows and the minute rows in one transaction, so the rate windows' record never disagrees
 * with the analytics; minutes older than the hour window are purged by the first batch of each
 * minute.
 */
export function usageRepository(db: Kysely<DatabaseSchema>, dialect: Store['kind']): UsageRepository {
  const minutePurge = new MinutePurge();
  const usage: UsageRepository = {
    async record(records) {
      const days = aggregateUsage(records);
      if (days.length === 0) return;
      const minutes = aggregateMinutes(records);
      const cutoff = minutePurge.due(minutes.latest);
      // PostgreSQL, a round trip away: one statement, the upserts as data-modifying CTEs (a
      // statement is a transaction of its own), instead of BEGIN, two upserts and COMMIT. Not
      // for a batch that also purges (the purge and the upserts would see one snapshot of the
      // minutes) nor one of many rows. SQLite has no data-modifying CTEs and no round trips.
      if (dialect === 'postgres' && cutoff === undefined && days.length <= USAGE_ROWS_PER_STATEMENT && minutes.rows.length <= USAGE_ROWS_PER_STATEMENT) {
        const one = sql<number>`1`.as('one');
        const withDays = db.with('days', () => upsertDays(db, days).returning(one));
        const statement =
          minutes.rows.length > 0 ? withDays.with('minutes', () => upsertMinutes(db, minutes.rows).returning(one)).selectNoFrom(one) : withDays.selectNoFrom(one);
        await statement.execute();
        return;
      }
      await db.transaction().execute(async (trx) => {
        for (const rows of chunks(days)) await upsertDays(trx, rows).execute();
        for (const rows of chunks(minutes.rows)) await upsertMinutes(trx, rows).execute();
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
  return usage;
}
