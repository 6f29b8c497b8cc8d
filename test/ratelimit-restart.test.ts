import assert from 'node:assert/strict';
import { join } from 'node:path';
import { describe, test, type TestContext } from 'node:test';
import { tempDir } from './helpers/build.js';
import { clockAtMinuteStart, createAccountToken } from './helpers/accounts-cli.js';
import { serve, type Served } from './helpers/serve.js';
import { schemaDatabaseUrl } from './helpers/pg-schema.js';
import { PLANS } from '../src/domain/accounts/plans.js';

// own process: servers it kills (scripts/test-tree.mjs).

/**
 * A restarted server (SIGTERM, or kill -9) rebuilds every rate window from the recorded usage:
 * across the restarts no minute admits more than the plan's figure. Run on SQLite and, with
 * TEST_DATABASE_URL, on PostgreSQL (a schema of its own, through DATABASE_URL's options).
 */

const FREE_PER_MINUTE = PLANS.free.requests_per_minute;
/** Calls made by each of the three server lives; together well over one minute's allowance. */
const CALLS_PER_LIFE = 7;

interface Outcome {
  status: number;
  /** X-RateLimit-Reset: for the free plan's 200s, the end of the minute that admitted the call. */
  reset: string | null;
  used: number | null;
}

async function call(s: Served, token: string): Promise<Outcome> {
  const res = await fetch(`http://127.0.0.1:${s.port}/api/user`, { headers: { authorization: `Bearer ${token}` } });
  const body = (await res.json()) as { data?: { api_calls_used: number } };
  return { status: res.status, reset: res.headers.get('x-ratelimit-reset'), used: body.data?.api_calls_used ?? null };
}

async function restartsKeepTheMinute(t: TestContext, databaseUrl: string): Promise<void> {
  const token = await createAccountToken(databaseUrl, 'free@example.com', 'free');
  // The steps take a few seconds: the servers' clock starts them at the first second of a minute, so they share one.
  const env = { DATABASE_URL: databaseUrl, ...clockAtMinuteStart() };
  const dbPath = join(tempDir(t), 'unused.db');
  const outcomes: Outcome[] = [];
  const lives: Array<'SIGTERM' | 'SIGKILL'> = ['SIGTERM', 'SIGKILL', 'SIGTERM'];
  for (const signal of lives) {
    const s = await serve(dbPath, false, env);
    t.after(() => s.child.kill('SIGKILL'));
    // One at a time: each answered call's record is committed before its response is sent.
    for (let i = 0; i < CALLS_PER_LIFE; i++) outcomes.push(await call(s, token));
    s.child.kill(signal);
    await s.exited;
  }
  assert.deepEqual([...new Set(outcomes.map((o) => o.status))].sort(), [200, 429], 'calls were admitted, then refused; never a 500');
  const admittedPerMinute = new Map<string, number>();
  for (const o of outcomes) if (o.status === 200) admittedPerMinute.set(o.reset!, (admittedPerMinute.get(o.reset!) ?? 0) + 1);
  t.diagnostic(`admitted per minute: ${JSON.stringify(Object.fromEntries(admittedPerMinute))}`);
  for (const [minute, n] of admittedPerMinute) assert.ok(n <= FREE_PER_MINUTE, `minute ending ${minute} admitted ${n} > ${FREE_PER_MINUTE}`);
  // The day goes on across the restarts too: each admitted call counts one more.
  const used = outcomes.filter((o) => o.status === 200).map((o) => o.used);
  assert.deepEqual(used, used.map((_, i) => i + 1), 'api_calls_used continues across restarts');
}

// The backends' tests are independent (a database each): they run at once.
describe('restarts keep every minute within the plan', { concurrency: true }, () => {
  test('restarts (SIGTERM, kill -9, SIGTERM) mid-minute on SQLite: no minute admits more than the plan allows', async (t) => {
    await restartsKeepTheMinute(t, `sqlite:${join(tempDir(t), 'restart.db')}`);
  });

  const pgUrl = process.env.TEST_DATABASE_URL;
  if (!pgUrl) {
    test('restarts on PostgreSQL: skipped because TEST_DATABASE_URL is unset (.ci/run sets it)', { skip: 'TEST_DATABASE_URL is unset' }, () => {});
  } else {
    test('restarts (SIGTERM, kill -9, SIGTERM) mid-minute on PostgreSQL: no minute admits more than the plan allows', async (t) => {
      await restartsKeepTheMinute(t, await schemaDatabaseUrl(t, pgUrl, 'nd_restart'));
    });
  }
});
