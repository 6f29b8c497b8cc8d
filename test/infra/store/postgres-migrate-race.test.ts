import assert from 'node:assert/strict';
import { test } from 'node:test';
import pg from 'pg';
import { openPostgresStore } from '../../../src/infra/store/postgres.js';
import { TEST_DATABASE_URL } from './backends.js';

/**
 * Kysely's migrator looks for its tables in the catalog of every schema of the database. While
 * other sessions create and drop schemas (parallel test files do, each in its own), that read
 * failed now and then with "schema … does not exist" or "column … does not exist", and a store
 * failed to open. Here three sessions churn schemas of their own while stores open one after the
 * other: every open succeeds. (Without the retry in migrate(), about a third of the opens failed.)
 */
test('opening a PostgreSQL store is not spoiled by other sessions dropping their schemas meanwhile', { skip: TEST_DATABASE_URL ? false : 'needs TEST_DATABASE_URL' }, async () => {
  const url = TEST_DATABASE_URL!;
  const prefix = `nd_churn_${process.pid}_`;
  const clients = await Promise.all(
    [0, 1, 2].map(async () => {
      const c = new pg.Client({ connectionString: url });
      await c.connect();
      return c;
    }),
  );
  let stop = false;
  let k = 0;
  const tables = (s: string) => Array.from({ length: 10 }, (_, j) => `create table "${s}".t${j} (id serial primary key, a text, b text, c text);`).join(' ');
  const churn = clients.map(async (c) => {
    while (!stop) {
      const s = `${prefix}${k++}`;
      await c.query(`create schema "${s}"; ${tables(s)}`);
      await c.query(`drop schema "${s}" cascade`);
    }
  });
  const failures: string[] = [];
  const admin = new pg.Client({ connectionString: url });
  await admin.connect();
  try {
    for (let i = 0; i < 15; i++) {
      const schema = `nd_test_race_${process.pid}_${i}`;
      try {
        const store = await openPostgresStore(url, { schema });
        await store.close();
      } catch (err) {
        failures.push(String(err));
      } finally {
        await admin.query(`drop schema if exists "${schema}" cascade`);
      }
    }
  } finally {
    stop = true;
    await Promise.all(churn);
    await Promise.all(clients.map((c) => c.end()));
    await admin.end();
  }
  assert.deepEqual(failures, []);
});
