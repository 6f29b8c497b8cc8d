import assert from 'node:assert/strict';
import { test } from 'node:test';
import { MinutePurge, USAGE_MINUTES_KEEP_MS, USAGE_MINUTES_PURGE_EVERY_MS, aggregateMinutes, aggregateUsage } from '../../../src/infra/store/usage-aggregate.js';
import type { UsageOutcome, UsageRecord } from '../../../src/domain/usage/repository.js';

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

test('aggregateMinutes counts calls per (account, UTC minute): 429s are not calls, records without a time count in their day only', () => {
  const t0 = Date.UTC(2026, 2, 4, 5, 6, 0);
  const at = (r: UsageRecord, ms: number): UsageRecord => ({ ...r, at: ms });
  const { rows, latest } = aggregateMinutes([
    at(rec(1, '2026-03-04', '/a', 'successful', 1), t0),
    at(rec(1, '2026-03-04', '/b', 'failed', 1), t0 + 59_999),
    at(rec(1, '2026-03-04', '/a', 'rate_limited', 1), t0 + 70_000),
    at(rec(2, '2026-03-04', '/a', 'successful', 1), t0 + 1),
    at(rec(1, '2026-03-04', '/a', 'successful', 1), t0 + 60_000),
    at(rec(1, '2026-03-04', '/a', 'successful', 1), t0 + 2),
    rec(1, '2026-03-04', '/a', 'successful', 1),
  ]);
  assert.deepEqual(rows, [
    { account_id: 1, minute: t0, calls: 3 },
    { account_id: 2, minute: t0, calls: 1 },
    { account_id: 1, minute: t0 + 60_000, calls: 1 },
  ]);
  assert.equal(latest, t0 + 60_000, 'the newest call, 429s aside');
});

test('MinutePurge: at most one purge per USAGE_MINUTES_PURGE_EVERY_MS of the records’ clock, keeping USAGE_MINUTES_KEEP_MS', () => {
  const purge = new MinutePurge();
  const t0 = Date.UTC(2026, 2, 4, 5, 6, 0);
  assert.equal(purge.due(-Infinity), undefined, 'a batch without calls purges nothing');
  assert.equal(purge.due(t0), t0 - USAGE_MINUTES_KEEP_MS);
  assert.equal(purge.due(t0 + USAGE_MINUTES_PURGE_EVERY_MS - 1), undefined);
  assert.equal(purge.due(t0 + USAGE_MINUTES_PURGE_EVERY_MS), t0 + USAGE_MINUTES_PURGE_EVERY_MS - USAGE_MINUTES_KEEP_MS);
});
