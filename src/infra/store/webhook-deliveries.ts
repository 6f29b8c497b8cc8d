import { sql, type Kysely } from 'kysely';
import { FINISHED_STATUSES } from '../../domain/jobs/types.js';
import type { DatabaseSchema } from './schema.js';
import type { ClaimedWebhookDelivery, WebhookDeliveryRepository } from '../../domain/webhooks/repository.js';

/**
 * Webhook deliveries in the database: the queue every instance sharing it works from. A
 * delivery is claimed with a lease (a compare-and-set on the row, the same SQL on SQLite and
 * PostgreSQL), so two instances never send the same attempt, and a delivery whose instance died
 * is taken by another once the lease lapses.
 */

interface DueRow {
  id: number | string;
  webhook_id: string;
  job_id: string;
  account_id: number | string;
  url: string;
  event_type: string;
  payload: string;
  attempts: number | string;
}

export function kyselyWebhookDeliveries(db: Kysely<DatabaseSchema>): WebhookDeliveryRepository {
  return {
    async enqueue(d) {
      const r = await db
        .insertInto('webhook_deliveries')
        .values(d)
        .onConflict((oc) => oc.column('job_id').doNothing())
        .executeTakeFirst();
      return Number(r.numInsertedOrUpdatedRows ?? 0n) === 1;
    },

    async claim(holder, now, leaseMs, limit, perAccount) {
      // Each account's due deliveries ranked oldest first; an account already holding `held`
      // live leases gets at most perAccount - held more, and comes after those holding fewer.
      // Same SQL on SQLite and PostgreSQL.
      const { rows: due } = await sql<DueRow>`
        SELECT d.id, d.webhook_id, d.job_id, d.account_id, d.url, d.event_type, d.payload, d.attempts
        FROM (
          SELECT id, webhook_id, job_id, account_id, url, event_type, payload, attempts, next_attempt_at,
            row_number() OVER (PARTITION BY account_id ORDER BY next_attempt_at, id) AS account_rank
          FROM webhook_deliveries
          WHERE state = 'pending' AND next_attempt_at <= ${now} AND (lease_until IS NULL OR lease_until <= ${now})
        ) d
        JOIN accounts a ON a.id = d.account_id AND a.status = 'active'
        LEFT JOIN (
          SELECT account_id, count(*) AS held FROM webhook_deliveries
          WHERE state = 'pending' AND lease_until > ${now}
          GROUP BY account_id
        ) h ON h.account_id = d.account_id
        WHERE d.account_rank + coalesce(h.held, 0) <= ${perAccount ?? limit}
        ORDER BY d.account_rank + coalesce(h.held, 0),
          coalesce((SELECT max(c.claimed_at) FROM webhook_deliveries c WHERE c.account_id = d.account_id), -1),
          d.next_attempt_at, d.id
        LIMIT ${limit}`.execute(db);
      const claimed: ClaimedWebhookDelivery[] = [];
      for (const row of due) {
        // The row is taken only if nobody took it since it was read: the same conditions, and
        // the same attempt count, checked in the update itself.
        const r = await db
          .updateTable('webhook_deliveries')
          .set({ lease_owner: holder, lease_until: now + leaseMs, claimed_at: now })
          .where('id', '=', Number(row.id))
          .where('state', '=', 'pending')
          .where('attempts', '=', Number(row.attempts))
          .where((eb) => eb.or([eb('lease_until', 'is', null), eb('lease_until', '<=', now)]))
          .executeTakeFirst();
        if (Number(r.numUpdatedRows) !== 1) continue;
        claimed.push({
          id: Number(row.id),
          webhook_id: row.webhook_id,
          job_id: row.job_id,
          account_id: Number(row.account_id),
          url: row.url,
          event_type: row.event_type,
          payload: row.payload,
          attempt: Number(row.attempts) + 1,
        });
      }
      return claimed;
    },

    async complete(id, holder, record, next) {
      return db.transaction().execute(async (trx) => {
        const r = await trx
          .updateTable('webhook_deliveries')
          .set({
            attempts: record.attempt,
            state: next.state,
            ...(next.state === 'pending' ? { next_attempt_at: next.next_attempt_at } : {}),
            lease_owner: null,
            lease_until: null,
          })
          .where('id', '=', id)
          .where('lease_owner', '=', holder)
          .where('attempts', '=', record.attempt - 1)
          .executeTakeFirst();
        if (Number(r.numUpdatedRows) !== 1) return false;
        await trx.insertInto('webhook_attempts').values({ delivery_id: id, ...record }).execute();
        return true;
      });
    },

    async dropAccount(accountId, cancelledAt, error) {
      const r = await db
        .updateTable('webhook_deliveries')
        .set({ state: 'dropped', lease_owner: null, lease_until: null })
        .where('account_id', '=', accountId)
        .where('state', '=', 'pending')
        .executeTakeFirst();
      await db
        .insertInto('webhook_deliveries')
        .columns(['webhook_id', 'job_id', 'account_id', 'url', 'event_type', 'payload', 'state', 'next_attempt_at', 'created_at'])
        .expression((eb) =>
          eb
            .selectFrom('jobs')
            .select((eb) => [
              sql<string>`'dropped_' || jobs.id`.as('webhook_id'),
              'jobs.id',
              'jobs.account_id',
              eb.fn.coalesce('jobs.webhook_url', sql.lit('')).as('url'),
              sql.lit('job.cancelled').as('event_type'),
              sql.lit('').as('payload'),
              sql.lit('dropped').as('state'),
              sql.lit(0).as('next_attempt_at'),
              sql.lit(cancelledAt).as('created_at'),
            ])
            .where('jobs.account_id', '=', accountId)
            .where('jobs.status', '=', 'cancelled')
            .where('jobs.finished_at', '=', cancelledAt)
            .where('jobs.error', '=', error)
            .where('jobs.webhook_url', 'is not', null),
        )
        .onConflict((oc) => oc.column('job_id').doNothing())
        .execute();
      return Number(r.numUpdatedRows);
    },

    async redeliver(jobId, now) {
      const r = await db
        .updateTable('webhook_deliveries')
        .set({ state: 'pending', next_attempt_at: now })
        .where('job_id', '=', jobId)
        .where((eb) => eb.or([eb('lease_until', 'is', null), eb('lease_until', '<=', now)]))
        .executeTakeFirst();
      if (Number(r.numUpdatedRows) === 1) return true;
      // Leased: an attempt is under way, which is the sending asked for.
      const row = await db.selectFrom('webhook_deliveries').select('id').where('job_id', '=', jobId).executeTakeFirst();
      return row !== undefined;
    },

    async release(id, holder) {
      await db.updateTable('webhook_deliveries').set({ lease_owner: null, lease_until: null }).where('id', '=', id).where('lease_owner', '=', holder).execute();
    },

    async attempts(jobId) {
      const rows = await db
        .selectFrom('webhook_attempts as a')
        .innerJoin('webhook_deliveries as d', 'd.id', 'a.delivery_id')
        .select(['a.attempt', 'a.at', 'a.status', 'a.duration_ms', 'a.error'])
        .where('d.job_id', '=', jobId)
        .orderBy('a.attempt')
        .execute();
      return rows.map((r) => ({
        attempt: Number(r.attempt),
        at: r.at,
        status: r.status === null ? null : Number(r.status),
        duration_ms: Number(r.duration_ms),
        error: r.error,
      }));
    },

    async purge(before) {
      const r = await db.deleteFrom('webhook_deliveries').where('state', '<>', 'pending').where('created_at', '<', before).executeTakeFirst();
      return Number(r.numDeletedRows);
    },

    async unqueued(since, until, limit) {
      // A range of the partial index jobs_webhook_finished (migration 0009), each probed against
      // the unique job_id of webhook_deliveries.
      const rows = await db
        .selectFrom('jobs')
        .select('jobs.id')
        .where('jobs.webhook_url', 'is not', null)
        .where('jobs.finished_at', '>=', since)
        .where('jobs.finished_at', '<=', until)
        .where('jobs.status', 'in', [...FINISHED_STATUSES])
        .where((eb) => eb.not(eb.exists(eb.selectFrom('webhook_deliveries as d').select('d.id').whereRef('d.job_id', '=', 'jobs.id'))))
        .orderBy('jobs.finished_at')
        .orderBy('jobs.id')
        .limit(limit)
        .execute();
      return rows.map((r) => r.id);
    },
  };
}
