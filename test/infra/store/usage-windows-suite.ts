import assert from 'node:assert/strict';
import { test } from 'node:test';
import type { UsageRecord } from '../../../src/domain/usage/repository.js';
import { USAGE_MINUTES_KEEP_MS, USAGE_MINUTES_PURGE_EVERY_MS } from '../../../src/infra/store/usage-aggregate.js';
import type { Backend } from './backends.js';

/** The per-minute usage record behind the rate windows (`windowCounts`), run against every backend. */
export function usageWindowsSuite(make: () => Backend): void {
  const name = make().name;
  // 2026-03-04 05:06:30 UTC
  const NOW = Date.UTC(2026, 2, 4, 5, 6, 30);
  const MINUTE = 60_000;
  const rec = (account_id: number, at: number, outcome: UsageRecord['outcome'] = 'successful'): UsageRecord => ({
    account_id,
    day: new Date(at).toISOString().slice(0, 10),
    endpoint: '/ip/lookup',
    outcome,
    duration_ms: 1,
    at,
  });

  test(`${name} store: windowCounts gives the calls of the minute, hour and day, 429s excluded, from another connection`, async (t) => {
    const backend = make();
    const store = await backend.open();
    const reader = await backend.open();
    t.after(async () => {
      await reader.close();
      await store.close();
      await backend.drop();
    });
    const created_at = '2026-01-01T00:00:00.000Z';
    const a = await store.accounts.create({ name: 'A', email: 'a@example.com', plan: 'free', created_at });
    const b = await store.accounts.create({ name: 'B', email: 'b@example.com', plan: 'free', created_at });
    assert.deepEqual(await reader.usage.windowCounts(a.id, NOW), { minute: 0, hour: 0, day: 0 }, 'nothing recorded');
    await store.usage.record([
      rec(a.id, NOW - 3 * 3_600_000), // earlier today, another hour
      rec(a.id, NOW - 5 * MINUTE), // this hour, another minute
      rec(a.id, NOW - 5 * MINUTE, 'failed'),
      rec(a.id, NOW - 30_000), // this minute's first millisecond
      rec(a.id, NOW, 'rate_limited'), // not a call
      rec(b.id, NOW), // another account
    ]);
    await store.usage.record([rec(a.id, NOW + 29_999), rec(a.id, NOW - 5 * 3_600_000)]);
    // Yesterday: neither the day nor (being more than an hour ago) the hour.
    await store.usage.record([rec(a.id, Date.UTC(2026, 2, 3, 23, 59, 59))]);
    assert.deepEqual(await reader.usage.windowCounts(a.id, NOW), { minute: 2, hour: 4, day: 6 });
    assert.deepEqual(await reader.usage.windowCounts(b.id, NOW), { minute: 1, hour: 1, day: 1 });
    assert.equal(await reader.usage.callsOn(a.id, '2026-03-04'), 6, 'the day agrees with the daily rows');
    assert.deepEqual(await reader.usage.windowCounts(a.id, NOW + MINUTE), { minute: 0, hour: 4, day: 6 }, 'the next minute starts empty');
  });

  test(`${name} store: minutes older than the kept span are purged; the last hour never is`, async (t) => {
    const backend = make();
    const store = await backend.open();
    t.after(async () => {
      await store.close();
      await backend.drop();
    });
    const a = await store.accounts.create({ name: 'A', email: 'a@example.com', plan: 'free', created_at: '2026-01-01T00:00:00.000Z' });
    const start = Date.UTC(2026, 2, 4, 1, 0, 0);
    await store.usage.record([rec(a.id, start)]);
    // Purges happen at most every USAGE_MINUTES_PURGE_EVERY_MS, judged by the records' clock.
    const later = start + USAGE_MINUTES_KEEP_MS + USAGE_MINUTES_PURGE_EVERY_MS + MINUTE;
    await store.usage.record([rec(a.id, later - 59 * MINUTE)]);
    await store.usage.record([rec(a.id, later)]);
    const db = (store as unknown as { db: import('kysely').Kysely<import('../../../src/infra/store/schema.js').DatabaseSchema> }).db;
    const minutes = (await db.selectFrom('usage_minutes').select('minute').where('account_id', '=', a.id).orderBy('minute').execute()).map((r) => Number(r.minute));
    assert.deepEqual(minutes, [later - 59 * MINUTE, later - (later % MINUTE)].map((m) => m - (m % MINUTE)), 'the old minute is gone');
    assert.ok(USAGE_MINUTES_KEEP_MS >= 3_600_000, 'at least the hour window is kept');
  });
}
