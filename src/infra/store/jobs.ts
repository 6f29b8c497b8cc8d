import { sql, type ExpressionBuilder, type Kysely, type Selectable, type Updateable } from 'kysely';
import { JOB_STATUSES, type JobStatus } from '../../domain/jobs/types.js';
import { JOB_CLAIMABLE_PER_ACCOUNT, type JobItemBatch, type JobRecord, type JobRepository } from '../../domain/jobs/repository.js';
import type { DatabaseSchema, JobsTable } from './schema.js';

/**
 * Jobs in the database (docs/jobs.md): the same SQL on SQLite and PostgreSQL.
 * A job is run by whoever claims it: the claim is a compare-and-set (UPDATE … WHERE id = ? AND
 * it is still queued, or running on a lapsed lease), so of any number of processes exactly one
 * sees a row changed. Every later write of the run is conditional on its lease, so a claimer
 * that lost its lease (it stalled, another took the job over) changes nothing.
 */

type Row = Selectable<JobsTable>;

function asJob(row: Row): JobRecord {
  return {
    ...row,
    account_id: Number(row.account_id),
    status: row.status as JobStatus,
    progress_done: Number(row.progress_done),
    progress_total: Number(row.progress_total),
    // bigint arrives as text from PostgreSQL.
    lease_until: row.lease_until === null ? null : Number(row.lease_until),
    attempts: Number(row.attempts),
  };
}

const changed = (r: { numUpdatedRows: bigint } | undefined): boolean => r !== undefined && Number(r.numUpdatedRows) > 0;

/** The job is running on `holder`'s lease: the condition of every write of a run after its claim. */
const heldBy = (holder: string) => (eb: ExpressionBuilder<DatabaseSchema, 'jobs'>) =>
  eb.and([eb('status', '=', 'running'), eb('lease_owner', '=', holder)]);

export function kyselyJobs(db: Kysely<DatabaseSchema>, dialect: 'sqlite' | 'postgres' = 'sqlite'): JobRepository {
  const find = async (id: string): Promise<JobRecord | undefined> => {
    const row = await db.selectFrom('jobs').selectAll().where('id', '=', id).executeTakeFirst();
    return row ? asJob(row) : undefined;
  };
  /**
   * A write of a run after its claim: updates the job while `holder` holds it, with `batch` added
   * in the same transaction; false when it is not held (nothing written).
   */
  const heldUpdate = async (id: string, holder: string, set: Updateable<JobsTable>, batch: JobItemBatch | null): Promise<boolean> => {
    const update = (q: Kysely<DatabaseSchema>) => q.updateTable('jobs').set(set).where('id', '=', id).where(heldBy(holder)).executeTakeFirst();
    if (batch === null) return changed(await update(db));
    return db.transaction().execute(async (trx) => {
      if (!changed(await update(trx))) return false;
      await trx.insertInto('job_item_batches').values({ job_id: id, ...batch }).execute();
      return true;
    });
  };
  return {
    async create(job) {
      return asJob(await db.insertInto('jobs').values({ ...job, status: 'queued', progress_done: 0, attempts: 0 }).returningAll().executeTakeFirstOrThrow());
    },
    find,
    async list(accountId, { status, before, limit }) {
      let q = db.selectFrom('jobs').selectAll().where('account_id', '=', accountId);
      if (status !== undefined) q = q.where('status', '=', status);
      if (before !== undefined) {
        q = q.where((eb) =>
          eb.or([eb('created_at', '<', before.created_at), eb.and([eb('created_at', '=', before.created_at), eb('id', '<', before.id)])]),
        );
      }
      const rows = await q.orderBy('created_at', 'desc').orderBy('id', 'desc').limit(limit).execute();
      return rows.map(asJob);
    },
    async itemBatches(jobId, afterSeq, limit) {
      const rows = await db
        .selectFrom('job_item_batches')
        .select(['first_seq', 'last_seq', 'lines'])
        .where('job_id', '=', jobId)
        .where('last_seq', '>', afterSeq)
        .orderBy('first_seq')
        .limit(limit)
        .execute();
      return rows.map((r) => ({ first_seq: Number(r.first_seq), last_seq: Number(r.last_seq), lines: r.lines }));
    },
    async claimable(now, limit, perAccount = JOB_CLAIMABLE_PER_ACCOUNT) {
      // Bounded per account: the accounts with queued jobs by a skip scan of
      // jobs_status_account_created (one index seek per account), each account's oldest
      // `perAccount` by a range of it, plus the few running jobs (lapsed leases, and what each
      // account has running). Never a look at every queued job: 12 ms (SQLite) with 200 000 queued.
      // PostgreSQL takes each account's oldest with LATERAL … LIMIT (a join on the range made it
      // hash every queued job: 23 s); SQLite, which has no LATERAL, by the range up to the
      // account's perAccount-th job, found first.
      const oldest =
        dialect === 'postgres'
          ? sql`SELECT j.id, j.account_id, j.created_at FROM waiting w
              CROSS JOIN LATERAL (SELECT q.id, q.account_id, q.created_at FROM jobs q WHERE q.status = 'queued' AND q.account_id = w.account_id
                ORDER BY q.created_at, q.id LIMIT ${perAccount}) j
              WHERE w.account_id IS NOT NULL`
          : sql`SELECT j.id, j.account_id, j.created_at FROM heads h
              JOIN jobs j ON j.status = 'queued' AND j.account_id = h.account_id AND j.created_at <= h.upto`;
      const heads =
        dialect === 'postgres'
          ? sql``
          : sql`heads AS MATERIALIZED (
              SELECT w.account_id, coalesce(
                (SELECT q.created_at FROM jobs q WHERE q.status = 'queued' AND q.account_id = w.account_id
                  ORDER BY q.created_at, q.id LIMIT 1 OFFSET ${perAccount - 1}),
                (SELECT max(q.created_at) FROM jobs q WHERE q.status = 'queued' AND q.account_id = w.account_id)) AS upto
              FROM waiting w WHERE w.account_id IS NOT NULL
            ),`;
      const { rows } = await sql<{ id: string; account_id: number | string; plan: string }>`
        WITH RECURSIVE waiting(account_id) AS (
          SELECT min(account_id) FROM jobs WHERE status = 'queued'
          UNION ALL
          SELECT (SELECT min(q.account_id) FROM jobs q WHERE q.status = 'queued' AND q.account_id > w.account_id)
          FROM waiting w WHERE w.account_id IS NOT NULL
        ),
        ${heads}
        candidates AS (
          ${oldest}
          UNION ALL
          SELECT id, account_id, created_at FROM jobs WHERE status = 'running' AND lease_until < ${now}
        ),
        ranked AS (
          SELECT id, account_id, created_at, row_number() OVER (PARTITION BY account_id ORDER BY created_at, id) AS account_rank
          FROM candidates
        ),
        busy AS (
          SELECT account_id, count(*) AS n FROM jobs WHERE status = 'running' AND lease_until >= ${now} GROUP BY account_id
        )
        SELECT r.id, r.account_id, a.plan
        FROM ranked r
        JOIN accounts a ON a.id = r.account_id AND a.status = 'active'
        LEFT JOIN busy b ON b.account_id = r.account_id
        WHERE r.account_rank <= ${perAccount}
        ORDER BY r.account_rank + coalesce(b.n, 0),
          coalesce((SELECT max(s.started_at) FROM jobs s WHERE s.account_id = r.account_id), ''),
          r.created_at, r.id
        LIMIT ${limit}`.execute(db);
      return rows.map((r) => ({ id: r.id, account_id: Number(r.account_id), plan: r.plan }));
    },
    async claim(id, holder, now, leaseUntil, startedAt) {
      const r = await db
        .updateTable('jobs')
        .set((eb) => ({
          status: 'running',
          lease_owner: holder,
          lease_until: leaseUntil,
          // The job's first start: a run again (a lapsed lease, a give-back, a yielded turn) goes on from its items.
          started_at: eb.fn.coalesce('started_at', eb.val(startedAt)),
          result: null,
          error: null,
          attempts: eb('attempts', '+', 1),
        }))
        .where('id', '=', id)
        .where((eb) => eb.or([eb('status', '=', 'queued'), eb.and([eb('status', '=', 'running'), eb('lease_until', '<', now)])]))
        // Nothing runs for a suspended account, whatever a claimer read before the suspension.
        .where('account_id', 'in', (eb) => eb.selectFrom('accounts').select('accounts.id').where('accounts.status', '=', 'active'))
        .returningAll()
        .executeTakeFirst();
      return r && asJob(r);
    },
    async renew(id, holder, leaseUntil) {
      return heldUpdate(id, holder, { lease_until: leaseUntil }, null);
    },
    async addItems(id, holder, batch, done) {
      return heldUpdate(id, holder, { progress_done: done }, batch);
    },
    async finish(id, holder, outcome, items) {
      return heldUpdate(id, holder, { ...outcome, lease_owner: null, lease_until: null }, items ?? null);
    },
    async release(id, holder) {
      return heldUpdate(id, holder, { status: 'queued', lease_owner: null, lease_until: null }, null);
    },
    async yieldTurn(id, holder) {
      // A lease that ended at the epoch: lapsed for every claimer, and not counted as the account's running job.
      return heldUpdate(id, holder, { lease_owner: null, lease_until: 0 }, null);
    },
    async runningCounts(now, accountIds) {
      const counts = new Map<number, number>();
      if (accountIds.length === 0) return counts;
      const rows = await db
        .selectFrom('jobs')
        .select(['account_id', (eb) => eb.fn.countAll<number | string | bigint>().as('n')])
        .where('status', '=', 'running')
        .where('account_id', 'in', [...new Set(accountIds)])
        .where('lease_until', '>=', now)
        .groupBy('account_id')
        .execute();
      for (const r of rows) counts.set(Number(r.account_id), Number(r.n));
      return counts;
    },
    async cancel(id, accountId, at) {
      const r = await db
        .updateTable('jobs')
        .set({ status: 'cancelled', finished_at: at, lease_owner: null, lease_until: null })
        .where('id', '=', id)
        .where('account_id', '=', accountId)
        .where('status', 'in', ['queued', 'running'])
        .executeTakeFirst();
      return changed(r);
    },
    async cancelAccount(accountId, at, error) {
      const rows = await db
        .updateTable('jobs')
        .set({ status: 'cancelled', finished_at: at, error, lease_owner: null, lease_until: null })
        .where('account_id', '=', accountId)
        .where('status', 'in', ['queued', 'running'])
        .returning('id')
        .execute();
      return rows.map((r) => r.id);
    },
    async purge(before) {
      // Items first: the same on a backend that would not cascade.
      await db
        .deleteFrom('job_item_batches')
        .where('job_id', 'in', (eb) => eb.selectFrom('jobs').select('id').where('created_at', '<', before))
        .execute();
      const r = await db.deleteFrom('jobs').where('created_at', '<', before).executeTakeFirst();
      return Number(r.numDeletedRows);
    },
    async countByStatus(cap) {
      const counts = {} as Record<JobStatus, number>;
      for (const status of JOB_STATUSES) {
        // count(*) of a LIMITed subquery: SQLite and PostgreSQL stop reading the index at `cap`.
        const row = await db
          .selectFrom((eb) => eb.selectFrom('jobs').select(sql<number>`1`.as('one')).where('status', '=', status).limit(cap).as('capped'))
          .select((eb) => eb.fn.countAll<number | string | bigint>().as('n'))
          .executeTakeFirstOrThrow();
        // count(*) arrives as text (bigint) from PostgreSQL.
        counts[status] = Number(row.n);
      }
      return counts;
    },
  };
}
