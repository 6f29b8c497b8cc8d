import type { TestContext } from 'node:test';
import pg from 'pg';

/**
 * A schema of the test's own in the PostgreSQL at `pgUrl`, dropped when the test ends, and a
 * DATABASE_URL that uses it (search_path in the connection options): for a `netdiag serve` or
 * CLI child process, which takes its database from the environment only.
 */
export async function schemaDatabaseUrl(t: TestContext, pgUrl: string, prefix: string): Promise<string> {
  const schema = `${prefix}_${process.pid}_${Date.now()}`;
  const admin = new pg.Client({ connectionString: pgUrl });
  await admin.connect();
  await admin.query(`create schema "${schema}"`);
  t.after(async () => {
    await admin.query(`drop schema if exists "${schema}" cascade`);
    await admin.end();
  });
  const url = new URL(pgUrl);
  url.searchParams.set('options', `-c search_path=${schema}`);
  return url.toString();
}
