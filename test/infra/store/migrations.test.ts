import assert from 'node:assert/strict';
import { join } from 'node:path';
import { test } from 'node:test';
import Database from 'better-sqlite3';
import { Kysely, Migrator, SqliteDialect } from 'kysely';
import { hashToken } from '../../../src/domain/accounts/tokens.js';
import { migrations } from '../../../src/infra/store/migrations.js';
import type { DatabaseSchema } from '../../../src/infra/store/schema.js';
import { openSqliteStore } from '../../../src/infra/store/sqlite.js';
import { tempDir } from '../../helpers/build.js';

test('0005_token_prefix: a database made before it keeps its tokens, with prefix null', async (t) => {
  const path = join(tempDir(t), 'old.db');
  const before = Object.fromEntries(Object.entries(migrations('sqlite')).filter(([name]) => name < '0005'));
  const old = new Kysely<DatabaseSchema>({ dialect: new SqliteDialect({ database: new Database(path) }) });
  const { error } = await new Migrator({ db: old, provider: { getMigrations: async () => before } }).migrateToLatest();
  assert.equal(error, undefined);
  const at = '2026-01-02T03:04:05.000Z';
  await old.insertInto('accounts').values({ name: 'O', email: 'o@example.com', plan: 'free', status: 'active', created_at: at }).execute();
  await old.insertInto('tokens').values({ account_id: 1, label: 'old', hash: hashToken('nd_old'), created_at: at }).execute();
  await old.destroy();

  const store = await openSqliteStore(path);
  t.after(() => store.close());
  const [token] = await store.tokens.listByAccount(1);
  assert.equal(token?.label, 'old');
  assert.equal(token?.prefix, null);
  assert.equal((await store.tokens.findByHash(hashToken('nd_old')))?.token.prefix, null);
  const made = await store.tokens.create({ account_id: 1, label: 'new', hash: hashToken('nd_new'), prefix: 'nd_new', created_at: at });
  assert.equal((await store.tokens.findByHash(hashToken('nd_new')))?.token.prefix, 'nd_new');
  assert.deepEqual((await store.tokens.listByAccount(1)).map((x) => x.prefix), [null, made.prefix]);
});
