import type { Kysely } from 'kysely';
import type { DatabaseSchema } from './schema.js';
import type { WebhookSecret, WebhookSecretRepository } from '../../domain/webhooks/repository.js';

const WEBHOOK_SECRET_COLUMNS = ['account_id', 'secret', 'created_at', 'previous_secret', 'previous_until', 'older_secret', 'older_until'] as const;

function asWebhookSecret(row: Record<string, unknown>): WebhookSecret {
  const older = typeof row.older_secret === 'string' && typeof row.older_until === 'string' ? { older_secret: row.older_secret, older_until: row.older_until } : {};
  return {
    account_id: Number(row.account_id),
    secret: row.secret as string,
    created_at: row.created_at as string,
    previous_secret: (row.previous_secret as string | null) ?? null,
    previous_until: (row.previous_until as string | null) ?? null,
    ...older,
  };
}

type RotateOptions = { expected: string; older: { secret: string; until: string } | null };

function rotateWebhookSecret(db: Kysely<DatabaseSchema>): WebhookSecretRepository['rotate'] {
  function rotate(accountId: number, next: { secret: string; created_at: string }, previousUntil: string): Promise<WebhookSecret>;
  function rotate(accountId: number, next: { secret: string; created_at: string }, previousUntil: string, opts: RotateOptions): Promise<WebhookSecret | null>;
  function rotate(accountId: number, next: { secret: string; created_at: string }, previousUntil: string, opts?: RotateOptions): Promise<WebhookSecret | null> {
    return db.transaction().execute(async (trx) => {
      const current = await trx.selectFrom('webhook_secrets').select(['secret']).where('account_id', '=', accountId).executeTakeFirst();
      if (!current) {
        if (opts) return null;
        await trx.insertInto('webhook_secrets').values({ account_id: accountId, ...next }).execute();
      } else {
        let update = trx
          .updateTable('webhook_secrets')
          .set({
            secret: next.secret,
            created_at: next.created_at,
            previous_secret: current.secret,
            previous_until: previousUntil,
            older_secret: opts?.older?.secret ?? null,
            older_until: opts?.older?.until ?? null,
          })
          .where('account_id', '=', accountId);
        // The update itself checks the expected secret: after a concurrent rotation that committed
        // first (PostgreSQL re-reads the row once its lock is released) there is nothing to update.
        if (opts) update = update.where('secret', '=', opts.expected);
        const updated = await update.executeTakeFirst();
        if (Number(updated.numUpdatedRows) !== 1) return null;
      }
      return asWebhookSecret(await trx.selectFrom('webhook_secrets').select(WEBHOOK_SECRET_COLUMNS).where('account_id', '=', accountId).executeTakeFirstOrThrow());
    });
  }
  return rotate;
}

export function webhookSecretRepository(db: Kysely<DatabaseSchema>): WebhookSecretRepository {
  const read = async (accountId: number) =>
    asWebhookSecret(await db.selectFrom('webhook_secrets').select(WEBHOOK_SECRET_COLUMNS).where('account_id', '=', accountId).executeTakeFirstOrThrow());
  return {
    async get(accountId, candidate) {
      await db
        .insertInto('webhook_secrets')
        .values({ account_id: accountId, ...candidate })
        .onConflict((oc) => oc.column('account_id').doNothing())
        .execute();
      return read(accountId);
    },
    rotate: rotateWebhookSecret(db),
  };
}
