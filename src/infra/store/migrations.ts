import { Migrator, sql, type Kysely, type Migration, type MigrationProvider, type MigrationResultSet } from 'kysely';

/**
 * Versioned migrations, run in name order at start. Written with Kysely's schema builder so
 * that SQLite and PostgreSQL share them; `autoIncrement`/`serial` is the one dialect switch.
 */
export function migrations(dialect: 'sqlite' | 'postgres'): Record<string, Migration> {
  const idColumn = (db: Kysely<unknown>, table: string) =>
    dialect === 'postgres'
      ? db.schema.createTable(table).addColumn('id', 'serial', (c) => c.primaryKey())
      : db.schema.createTable(table).addColumn('id', 'integer', (c) => c.primaryKey().autoIncrement());

  /** A job's items a row each (0007); replaced by job_item_batches in 0010. */
  const jobItemsTable = (db: Kysely<unknown>) =>
    db.schema
      .createTable('job_items')
      .addColumn('job_id', 'text', (c) => c.notNull().references('jobs.id').onDelete('cascade'))
      .addColumn('seq', 'integer', (c) => c.notNull())
      .addColumn('idx', 'integer', (c) => c.notNull())
      .addColumn('item', 'text', (c) => c.notNull())
      .addPrimaryKeyConstraint('job_items_pk', ['job_id', 'seq'])
      .execute();

  return {
    '0001_accounts_tokens': {
      async up(db) {
        await idColumn(db, 'accounts')
          .addColumn('name', 'text', (c) => c.notNull())
          .addColumn('email', 'text', (c) => c.notNull().unique())
          .addColumn('plan', 'text', (c) => c.notNull())
          .addColumn('status', 'text', (c) => c.notNull().defaultTo('active'))
          .addColumn('created_at', 'text', (c) => c.notNull())
          .execute();
        await idColumn(db, 'tokens')
          .addColumn('account_id', 'integer', (c) => c.notNull().references('accounts.id').onDelete('cascade'))
          .addColumn('label', 'text', (c) => c.notNull().defaultTo(''))
          .addColumn('hash', 'text', (c) => c.notNull().unique())
          .addColumn('created_at', 'text', (c) => c.notNull())
          .addColumn('last_used_at', 'text')
          .addColumn('revoked_at', 'text')
          .execute();
        await db.schema.createIndex('tokens_account_id').on('tokens').column('account_id').execute();
      },
      async down(db) {
        await db.schema.dropTable('tokens').execute();
        await db.schema.dropTable('accounts').execute();
      },
    },
    '0002_usage_daily': {
      async up(db) {
        await db.schema
          .createTable('usage_daily')
          .addColumn('account_id', 'integer', (c) => c.notNull().references('accounts.id').onDelete('cascade'))
          .addColumn('day', 'text', (c) => c.notNull())
          .addColumn('endpoint', 'text', (c) => c.notNull())
          .addColumn('requests', 'integer', (c) => c.notNull().defaultTo(0))
          .addColumn('successful', 'integer', (c) => c.notNull().defaultTo(0))
          .addColumn('failed', 'integer', (c) => c.notNull().defaultTo(0))
          .addColumn('rate_limited', 'integer', (c) => c.notNull().defaultTo(0))
          .addColumn('total_ms', 'double precision', (c) => c.notNull().defaultTo(0))
          .addPrimaryKeyConstraint('usage_daily_pk', ['account_id', 'day', 'endpoint'])
          .execute();
      },
      async down(db) {
        await db.schema.dropTable('usage_daily').execute();
      },
    },
    '0003_judge_nonces': {
      async up(db) {
        // The primary key is what makes a use single: a second insert of (id, kind) does nothing.
        await db.schema
          .createTable('judge_nonce_uses')
          .addColumn('id', 'text', (c) => c.notNull())
          .addColumn('kind', 'text', (c) => c.notNull())
          .addColumn('expires_at', 'bigint', (c) => c.notNull())
          .addPrimaryKeyConstraint('judge_nonce_uses_pk', ['id', 'kind'])
          .execute();
        await db.schema.createIndex('judge_nonce_uses_expires_at').on('judge_nonce_uses').column('expires_at').execute();
        await db.schema
          .createTable('secrets')
          .addColumn('name', 'text', (c) => c.primaryKey())
          .addColumn('value', 'text', (c) => c.notNull())
          .addColumn('created_at', 'text', (c) => c.notNull())
          .execute();
      },
      async down(db) {
        await db.schema.dropTable('secrets').execute();
        await db.schema.dropTable('judge_nonce_uses').execute();
      },
    },
    '0004_usage_minutes': {
      async up(db) {
        await db.schema
          .createTable('usage_minutes')
          .addColumn('account_id', 'integer', (c) => c.notNull().references('accounts.id').onDelete('cascade'))
          .addColumn('minute', 'bigint', (c) => c.notNull())
          .addColumn('calls', 'integer', (c) => c.notNull().defaultTo(0))
          .addPrimaryKeyConstraint('usage_minutes_pk', ['account_id', 'minute'])
          .execute();
        // For the purge of old minutes, which goes by minute across accounts.
        await db.schema.createIndex('usage_minutes_minute').on('usage_minutes').column('minute').execute();
      },
      async down(db) {
        await db.schema.dropTable('usage_minutes').execute();
      },
    },
    '0005_token_prefix': {
      async up(db) {
        // Null for the tokens made before: only their hash is known.
        await db.schema.alterTable('tokens').addColumn('prefix', 'text').execute();
      },
      async down(db) {
        await db.schema.alterTable('tokens').dropColumn('prefix').execute();
      },
    },
    '0006_dashboard': {
      async up(db) {
        // Null until the holder sets one (accounts made by the CLI or before the dashboard).
        await db.schema.alterTable('accounts').addColumn('password_hash', 'text').execute();
        await db.schema.alterTable('accounts').addColumn('is_admin', 'integer', (c) => c.notNull().defaultTo(0)).execute();
        await db.schema.alterTable('tokens').addColumn('expires_at', 'text').execute();
        // A session row is keyed by the SHA-256 of the cookie's secret: a leaked table is no login.
        await db.schema
          .createTable('sessions')
          .addColumn('id', 'text', (c) => c.primaryKey())
          .addColumn('account_id', 'integer', (c) => c.notNull().references('accounts.id').onDelete('cascade'))
          .addColumn('created_at', 'text', (c) => c.notNull())
          .addColumn('last_seen_at', 'text', (c) => c.notNull())
          .addColumn('expires_at', 'text', (c) => c.notNull())
          .addColumn('user_agent', 'text', (c) => c.notNull().defaultTo(''))
          .addColumn('ip', 'text', (c) => c.notNull().defaultTo(''))
          .addColumn('revoked_at', 'text')
          .execute();
        await db.schema.createIndex('sessions_account_id').on('sessions').column('account_id').execute();
        // One-time links: setting a password (first start, reset) and invitations to sign up.
        await db.schema
          .createTable('auth_links')
          .addColumn('hash', 'text', (c) => c.primaryKey())
          .addColumn('kind', 'text', (c) => c.notNull())
          .addColumn('account_id', 'integer', (c) => c.references('accounts.id').onDelete('cascade'))
          .addColumn('email', 'text')
          .addColumn('plan', 'text')
          .addColumn('created_by', 'integer')
          .addColumn('created_at', 'text', (c) => c.notNull())
          .addColumn('expires_at', 'text', (c) => c.notNull())
          .addColumn('used_at', 'text')
          .execute();
        // The webhook signing secret per account; the previous one signs too until previous_until.
        await db.schema
          .createTable('webhook_secrets')
          .addColumn('account_id', 'integer', (c) => c.primaryKey().references('accounts.id').onDelete('cascade'))
          .addColumn('secret', 'text', (c) => c.notNull())
          .addColumn('created_at', 'text', (c) => c.notNull())
          .addColumn('previous_secret', 'text')
          .addColumn('previous_until', 'text')
          .execute();
      },
      async down(db) {
        await db.schema.dropTable('webhook_secrets').execute();
        await db.schema.dropTable('auth_links').execute();
        await db.schema.dropTable('sessions').execute();
        await db.schema.alterTable('tokens').dropColumn('expires_at').execute();
        await db.schema.alterTable('accounts').dropColumn('is_admin').execute();
        await db.schema.alterTable('accounts').dropColumn('password_hash').execute();
      },
    },
    '0007_jobs': {
      async up(db) {
        await db.schema
          .createTable('jobs')
          .addColumn('id', 'text', (c) => c.primaryKey())
          .addColumn('account_id', 'integer', (c) => c.notNull().references('accounts.id').onDelete('cascade'))
          .addColumn('endpoint', 'text', (c) => c.notNull())
          .addColumn('status', 'text', (c) => c.notNull())
          .addColumn('body', 'text', (c) => c.notNull())
          .addColumn('webhook_url', 'text')
          .addColumn('progress_done', 'integer', (c) => c.notNull().defaultTo(0))
          .addColumn('progress_total', 'integer', (c) => c.notNull())
          .addColumn('created_at', 'text', (c) => c.notNull())
          .addColumn('started_at', 'text')
          .addColumn('finished_at', 'text')
          .addColumn('result', 'text')
          .addColumn('error', 'text')
          .addColumn('lease_owner', 'text')
          .addColumn('lease_until', 'bigint')
          .addColumn('attempts', 'integer', (c) => c.notNull().defaultTo(0))
          .execute();
        // The account's list, newest first; the claimers' scan of queued and lapsed jobs; the TTL purge.
        await db.schema.createIndex('jobs_account_created').on('jobs').columns(['account_id', 'created_at', 'id']).execute();
        await db.schema.createIndex('jobs_status_created').on('jobs').columns(['status', 'created_at']).execute();
        await db.schema.createIndex('jobs_created').on('jobs').column('created_at').execute();
        await jobItemsTable(db);
      },
      async down(db) {
        await db.schema.dropTable('job_items').execute();
        await db.schema.dropTable('jobs').execute();
      },
    },
    '0008_webhooks': {
      async up(db) {
        // One row per job event (job_id unique: a job finishing twice is still one event), with
        // the body fixed at enqueue so every retry sends the same bytes under the same webhook_id.
        // No foreign key to jobs: deliveries outlive nothing but are purged on their own.
        await idColumn(db, 'webhook_deliveries')
          .addColumn('webhook_id', 'text', (c) => c.notNull().unique())
          .addColumn('job_id', 'text', (c) => c.notNull().unique())
          .addColumn('account_id', 'integer', (c) => c.notNull().references('accounts.id').onDelete('cascade'))
          .addColumn('url', 'text', (c) => c.notNull())
          .addColumn('event_type', 'text', (c) => c.notNull())
          .addColumn('payload', 'text', (c) => c.notNull())
          .addColumn('state', 'text', (c) => c.notNull().defaultTo('pending'))
          .addColumn('attempts', 'integer', (c) => c.notNull().defaultTo(0))
          .addColumn('next_attempt_at', 'bigint', (c) => c.notNull())
          .addColumn('lease_owner', 'text')
          .addColumn('lease_until', 'bigint')
          .addColumn('created_at', 'text', (c) => c.notNull())
          .execute();
        await db.schema.createIndex('webhook_deliveries_due').on('webhook_deliveries').columns(['state', 'next_attempt_at']).execute();
        // The primary key makes an attempt single: a second record of (delivery, attempt) fails.
        await db.schema
          .createTable('webhook_attempts')
          .addColumn('delivery_id', 'integer', (c) => c.notNull().references('webhook_deliveries.id').onDelete('cascade'))
          .addColumn('attempt', 'integer', (c) => c.notNull())
          .addColumn('at', 'text', (c) => c.notNull())
          .addColumn('status', 'integer')
          .addColumn('duration_ms', 'double precision', (c) => c.notNull())
          .addColumn('error', 'text')
          .addPrimaryKeyConstraint('webhook_attempts_pk', ['delivery_id', 'attempt'])
          .execute();
      },
      async down(db) {
        await db.schema.dropTable('webhook_attempts').execute();
        await db.schema.dropTable('webhook_deliveries').execute();
      },
    },
    '0009_webhook_recovery': {
      async up(db) {
        // The sweep for finished jobs whose event was never queued (webhook-deliveries.ts, unqueued):
        // a range of finished_at over the jobs that have a webhook URL only.
        await db.schema
          .createIndex('jobs_webhook_finished')
          .on('jobs')
          .columns(['finished_at', 'id'])
          .where(sql.ref('webhook_url'), 'is not', null)
          .execute();
      },
      async down(db) {
        await db.schema.dropIndex('jobs_webhook_finished').execute();
      },
    },
    '0010_job_item_batches': {
      async up(db) {
        // A job's items that completed together are one row, kept as the NDJSON lines its stream
        // sends (src/domain/jobs/items.ts): a 1000-port scan wrote a thousand rows before.
        await db.schema
          .createTable('job_item_batches')
          .addColumn('job_id', 'text', (c) => c.notNull().references('jobs.id').onDelete('cascade'))
          .addColumn('first_seq', 'integer', (c) => c.notNull())
          .addColumn('last_seq', 'integer', (c) => c.notNull())
          .addColumn('lines', 'text', (c) => c.notNull())
          .addPrimaryKeyConstraint('job_item_batches_pk', ['job_id', 'first_seq'])
          .execute();
        // The items already written (jobs still within their time to live), a batch of one each.
        const newline = dialect === 'postgres' ? sql`chr(10)` : sql`char(10)`;
        await sql`insert into job_item_batches (job_id, first_seq, last_seq, lines)
          select job_id, seq, seq, '{"seq":' || seq || ',"index":' || idx || ',"item":' || item || '}' || ${newline} from job_items`.execute(db);
        await db.schema.dropTable('job_items').execute();
      },
      async down(db) {
        // The items are not carried back: a job streamed after the downgrade shows only its result.
        await jobItemsTable(db);
        await db.schema.dropTable('job_item_batches').execute();
      },
    },
    '0011_fair_queues': {
      async up(db) {
        // Jobs are taken round-robin between accounts (jobs.ts, claimable): the accounts with queued
        // jobs found by a skip scan, each one's oldest few, and when each last had a job started.
        await db.schema.createIndex('jobs_status_account_created').on('jobs').columns(['status', 'account_id', 'created_at', 'id']).execute();
        await db.schema.createIndex('jobs_account_started').on('jobs').columns(['account_id', 'started_at']).execute();
        // The same for webhook deliveries (webhook-deliveries.ts, claim): when each account last had one taken.
        await db.schema.alterTable('webhook_deliveries').addColumn('claimed_at', 'bigint').execute();
        await db.schema.createIndex('webhook_deliveries_account_claimed').on('webhook_deliveries').columns(['account_id', 'claimed_at']).execute();
      },
      async down(db) {
        await db.schema.dropIndex('webhook_deliveries_account_claimed').execute();
        await db.schema.alterTable('webhook_deliveries').dropColumn('claimed_at').execute();
        await db.schema.dropIndex('jobs_account_started').execute();
        await db.schema.dropIndex('jobs_status_account_created').execute();
      },
    },
    '0012_webhook_secret_older': {
      async up(db) {
        // A second rotation within a day keeps the first replaced secret signing too (docs/api.md: at most 3 signatures).
        await db.schema.alterTable('webhook_secrets').addColumn('older_secret', 'text').execute();
        await db.schema.alterTable('webhook_secrets').addColumn('older_until', 'text').execute();
      },
      async down(db) {
        await db.schema.alterTable('webhook_secrets').dropColumn('older_until').execute();
        await db.schema.alterTable('webhook_secrets').dropColumn('older_secret').execute();
      },
    },
  };
}

/** Asks again up to this often, waiting MIGRATE_RETRY_MS × the attempt between: busy databases churn schemas for a while. */
const MIGRATE_RETRIES = 20;
const MIGRATE_RETRY_MS = 10;
/** What PostgreSQL says when a catalog read meets objects dropped meanwhile: no such schema, table, column or object. */
const DROPPED_MEANWHILE = new Set(['3F000', '42P01', '42703', '42704']);

/** The same race met inside PostgreSQL's own catalog cache: an internal error (XX000) with these words. */
const CACHE_LOOKUP_FAILED = 'cache lookup failed for ';

function isDroppedMeanwhile(err: unknown): boolean {
  if (typeof err !== 'object' || err === null) return false;
  const { code, message } = err as { code?: unknown; message?: unknown };
  if (DROPPED_MEANWHILE.has(String(code))) return true;
  return code === 'XX000' && typeof message === 'string' && message.startsWith(CACHE_LOOKUP_FAILED);
}

/**
 * Brings the schema to the latest version; a failure names the migration that broke. `schema`
 * (PostgreSQL) is where our tables live: Kysely looks for its migration tables in every schema
 * of the database unless told, so another schema's (another application's, or a parallel test's)
 * would pass for ours.
 */
export async function migrate<T>(db: Kysely<T>, dialect: 'sqlite' | 'postgres', schema?: string): Promise<void> {
  const provider: MigrationProvider = { getMigrations: async () => migrations(dialect) };
  const migrator = new Migrator({ db, provider, ...(schema ? { migrationTableSchema: schema } : {}) });
  const { error, results } = await migrateToLatest(migrator);
  if (error) {
    const failed = results?.find((r) => r.status === 'Error')?.migrationName ?? 'unknown';
    throw new Error(`database migration ${failed} failed: ${error instanceof Error ? error.message : String(error)}`);
  }
}

/**
 * migrator.migrateToLatest(), asked again while a concurrent schema drop spoils its read: Kysely's
 * look for its own tables reads the catalog of every schema, and a schema another session drops
 * meanwhile makes that read fail ("schema … does not exist", "column … does not exist", "cache
 * lookup failed for namespace …") though nothing of ours is missing. The look is read-only and
 * nothing was migrated then, so asking again is safe.
 */
export async function migrateToLatest(migrator: Migrator): Promise<MigrationResultSet> {
  let outcome = await migrator.migrateToLatest();
  for (let retry = 0; retry < MIGRATE_RETRIES && isDroppedMeanwhile(outcome.error) && (outcome.results ?? []).length === 0; retry++) {
    await new Promise((resolve) => setTimeout(resolve, MIGRATE_RETRY_MS * (retry + 1)));
    outcome = await migrator.migrateToLatest();
  }
  return outcome;
}
