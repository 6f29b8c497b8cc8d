import assert from 'node:assert/strict';
import { join } from 'node:path';
import { test } from 'node:test';
import { tempDir } from './helpers/build.js';
import { serve } from './helpers/serve.js';
import { openSqliteStore } from '../src/infra/store/sqlite.js';

// own process: servers it kills with calls in flight (scripts/test-tree.mjs).

/** The account a first start on an empty database creates (src/server.ts). */
const FIRST_ACCOUNT_EMAIL = 'admin@localhost';

test('kill -9 during a burst, then restart: usage counts exactly the responses that were sent', async (t) => {
  const dbPath = join(tempDir(t), 'crash.db');
  const first = await serve(dbPath, true);
  t.after(() => first.child.kill('SIGKILL'));
  const { port, token } = first;
  assert.ok(token);
  const url = `http://127.0.0.1:${port}/api/user`;
  const headers = { authorization: `Bearer ${token}` };

  let received = 0;
  let started = 0;
  let killed = false;
  const statuses = new Map<number, number>();
  const worker = async () => {
    while (!killed && started < 2000) {
      started++;
      try {
        const res = await fetch(url, { headers });
        await res.arrayBuffer();
        received++;
        statuses.set(res.status, (statuses.get(res.status) ?? 0) + 1);
        if (received === 150) {
          killed = true;
          first.child.kill('SIGKILL');
        }
      } catch {
        // the connection died with the server: this response was never sent
      }
    }
  };
  await Promise.all(Array.from({ length: 16 }, worker));
  await first.exited;
  const inFlightAtKill = started - received;

  const second = await serve(dbPath, false);
  t.after(() => second.child.kill('SIGKILL'));
  // Read from the database: through the API the restarted server would (rightly) still refuse
  // this account for the rest of the minute, rebuilt from these very records.
  const store = await openSqliteStore(dbPath);
  const account = (await store.accounts.findByEmail(FIRST_ACCOUNT_EMAIL))!;
  const today = new Date().toISOString().slice(0, 10);
  const rows = await store.usage.rows(account.id, today, today);
  await store.close();
  const recorded = rows.reduce((sum, r) => ({ requests: sum.requests + r.requests, successful: sum.successful + r.successful, rate_limited: sum.rate_limited + r.rate_limited }), {
    requests: 0,
    successful: 0,
    rate_limited: 0,
  });
  t.diagnostic(`received ${received} responses (${JSON.stringify(Object.fromEntries(statuses))}), ${inFlightAtKill} in flight at the kill, recorded ${recorded.requests}`);
  // No response that reached a client may be missing; a record may exist for a response the kill
  // cut off between commit and write (it was committed first, by design), never more than were in flight.
  assert.ok(recorded.requests >= received, `lost records: ${recorded.requests} recorded < ${received} received`);
  assert.ok(recorded.requests <= received + inFlightAtKill, `phantom records: ${recorded.requests} > ${received} + ${inFlightAtKill}`);
  assert.ok(recorded.successful >= (statuses.get(200) ?? 0));
  assert.ok(recorded.rate_limited >= (statuses.get(429) ?? 0));
  second.child.kill('SIGTERM');
  await second.exited;
});
