import assert from 'node:assert/strict';
import { join } from 'node:path';
import { test } from 'node:test';
import Database from 'better-sqlite3';
import { Kysely, Migrator, PostgresDialect, SqliteDialect, sql } from 'kysely';
import pg from 'pg';
import { itemsOf, ndjsonAfter } from '../../../src/domain/jobs/items.js';
import { migrateToLatest, migrations } from '../../../src/infra/store/migrations.js';
import { openSqliteStore } from '../../../src/infra/store/sqlite.js';
import type { Store } from '../../../src/domain/store.js';
import { tempDir } from '../../helpers/build.js';
import { TEST_DATABASE_URL, postgresBackend } from './backends.js';

/**
 * 0010_job_item_batches: items written one row each before it (a job still within its time to
 * live, streamed after the upgrade) come out of the new table as they were, a batch of one each.
 */

const AT = '2026-01-02T03:04:05.000Z';
const OLD_ITEMS = [
  { seq: 1, idx: 1, item: '{"port":2,"reason":"a \\"quoted\\" line\\nbreak"}' },
  { seq: 2, idx: 0, item: '{"port":1,"reason":"ok"}' },
];

/** Migrates `db` up to 0009 and writes a running job with the items of OLD_ITEMS, as that schema held them. */
async function oldDatabase(db: Kysely<any>, dialect: 'sqlite' | 'postgres', schema?: string): Promise<void> {
  const before = Object.fromEntries(Object.entries(migrations(dialect)).filter(([name]) => name < '0010'));
  const { error } = await migrateToLatest(new Migrator({ db, provider: { getMigrations: async () => before }, ...(schema ? { migrationTableSchema: schema } : {}) }));
  assert.equal(error, undefined);
  await db.insertInto('accounts').values({ name: 'O', email: 'o@example.com', plan: 'free', status: 'active', created_at: AT }).execute();
  await db
    .insertInto('jobs')
    .values({ id: 'job_old', account_id: 1, endpoint: '/port/scan-range', status: 'running', body: '{}', progress_done: 2, progress_total: 3, created_at: AT, attempts: 1 })
    .execute();
  await db.insertInto('job_items').values(OLD_ITEMS.map((i) => ({ job_id: 'job_old', ...i }))).execute();
}

async function assertCarriedOver(store: Store): Promise<void> {
  const batches = await store.jobs.itemBatches('job_old', 0, 10);
  assert.deepEqual(batches.map((b) => [b.first_seq, b.last_seq]), [[1, 1], [2, 2]]);
  assert.deepEqual(itemsOf(batches), OLD_ITEMS.map((i) => ({ seq: i.seq, index: i.idx, item: i.item })));
  for (const l of ndjsonAfter(batches, 0).trimEnd().split('\n')) JSON.parse(l);
  assert.deepEqual(itemsOf(await store.jobs.itemBatches('job_old', 1, 10), 1).map((i) => i.seq), [2]);
}

test('0010_job_item_batches on SQLite: the items of a job written before it are streamed as before', async (t) => {
  const path = join(tempDir(t), 'old.db');
  const old = new Kysely<any>({ dialect: new SqliteDialect({ database: new Database(path) }) });
  await oldDatabase(old, 'sqlite');
  await old.destroy();
  const store = await openSqliteStore(path);
  t.after(() => store.close());
  await assertCarriedOver(store);
});

test('0010_job_item_batches on PostgreSQL: the same', { skip: TEST_DATABASE_URL ? false : 'TEST_DATABASE_URL is not set' }, async (t) => {
  const backend = postgresBackend(TEST_DATABASE_URL!);
  const pool = new pg.Pool({ connectionString: TEST_DATABASE_URL, options: `-c search_path=${backend.schema}`, max: 1 });
  const old = new Kysely<any>({ dialect: new PostgresDialect({ pool }) });
  await sql`create schema ${sql.id(backend.schema)}`.execute(old);
  await oldDatabase(old, 'postgres', backend.schema);
  await old.destroy();
  const store = await backend.open();
  t.after(async () => {
    await store.close();
    await backend.drop();
  });
  await assertCarriedOver(store);
});
