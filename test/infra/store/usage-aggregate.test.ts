import assert from 'node:assert/strict';
import { test } from 'node:test';
import { aggregateUsage } from '../../../src/infra/store/usage-aggregate.js';
import type { UsageOutcome, UsageRecord } from '../../../src/infra/store/store.js';

const rec = (account_id: number, day: string, endpoint: string, outcome: UsageOutcome, duration_ms: number): UsageRecord => ({
  account_id,
  day,
  endpoint,
  outcome,
  duration_ms,
});

test('aggregateUsage folds runs and interleaved keys into one row per (account, day, endpoint)', () => {
  const rows = aggregateUsage([
    rec(1, '2026-01-01', '/user', 'successful', 1),
    rec(1, '2026-01-01', '/user', 'failed', 2),
    rec(2, '2026-01-01', '/user', 'successful', 4),
    rec(1, '2026-01-01', '/user', 'rate_limited', 8),
    rec(1, '2026-01-02', '/user', 'successful', 16),
    rec(1, '2026-01-01', '/ip/lookup', 'successful', 32),
    rec(1, '2026-01-01', '/user', 'successful', 64),
  ]);
  const byKey = Object.fromEntries(rows.map((r) => [`${r.account_id} ${r.day} ${r.endpoint}`, r]));
  assert.equal(rows.length, 4);
  assert.deepEqual(byKey['1 2026-01-01 /user'], {
    account_id: 1,
    day: '2026-01-01',
    endpoint: '/user',
    requests: 4,
    successful: 2,
    failed: 1,
    rate_limited: 1,
    total_ms: 75,
  });
  assert.equal(byKey['2 2026-01-01 /user']?.requests, 1);
  assert.equal(byKey['1 2026-01-02 /user']?.total_ms, 16);
  assert.equal(byKey['1 2026-01-01 /ip/lookup']?.successful, 1);
  assert.deepEqual(aggregateUsage([]), []);
});
