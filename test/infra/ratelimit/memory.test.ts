import assert from 'node:assert/strict';
import { test } from 'node:test';
import { MemoryRateLimiter } from '../../../src/infra/ratelimit/memory.js';
import { rateLimiterSuite } from './suite.js';

rateLimiterSuite('memory', async () => new MemoryRateLimiter(), undefined, async (seed) => new MemoryRateLimiter(seed));

test('memory: a window seed is loaded once per key, and admission stays exact while it loads', async () => {
  let seeds = 0;
  // Each seed loads until the test lets it: every call below is made while it loads.
  let loaded!: () => void;
  const loading = new Promise<void>((resolve) => (loaded = resolve));
  const limiter = new MemoryRateLimiter(async (key) => {
    seeds++;
    await loading;
    return { minute: 0, hour: 0, day: key === 'busy' ? 495 : 0 };
  });
  const limits = { minute: 10, hour: 100, day: 500 };
  const now = Date.UTC(2026, 0, 1, 12);
  const calls = Array.from({ length: 10 }, () => limiter.consume('busy', limits, now));
  loaded();
  const busy = await Promise.all(calls);
  assert.equal(busy.filter((d) => d.allowed).length, 5, 'only the day’s remaining 5 are admitted');
  assert.equal(busy.find((d) => !d.allowed)?.exceeded?.window, 'day');
  await limiter.consume('idle', limits, now);
  await limiter.consume('idle', limits, now);
  assert.equal(seeds, 2, 'one seed per key');
});

test('memory: the seed fills every window, so a restart mid-minute hands out no fresh minute or hour', async () => {
  const limits = { minute: 10, hour: 100, day: 500 };
  const now = Date.UTC(2026, 0, 1, 12, 30, 15);
  const recorded = { minute: 7, hour: 95, day: 120 };
  const seenAt: number[] = [];
  const limiter = new MemoryRateLimiter(async (_key, at) => {
    seenAt.push(at);
    return recorded;
  });
  const first = await limiter.consume('acct:1', limits, now);
  assert.deepEqual(first.windows.map((w) => w.used), [8, 96, 121], 'counted on top of the recorded calls');
  const more = await Promise.all(Array.from({ length: 5 }, () => limiter.consume('acct:1', limits, now + 1)));
  assert.equal(more.filter((d) => d.allowed).length, 2, 'the minute had 3 left: 8, 9, 10');
  assert.equal(more.find((d) => !d.allowed)?.exceeded?.window, 'minute');
  const nextMinute = await limiter.consume('acct:1', limits, now + 60_000);
  assert.deepEqual(nextMinute.windows.map((w) => w.used), [1, 99, 124], 'the next minute starts empty, the hour and day go on');
  const nextHourFull = await Promise.all(Array.from({ length: 5 }, () => limiter.consume('acct:1', limits, now + 60_001)));
  assert.equal(nextHourFull.filter((d) => d.allowed).length, 1, 'the hour (100) is the limit now');
  assert.equal(nextHourFull.find((d) => !d.allowed)?.exceeded?.window, 'hour');
  assert.deepEqual(seenAt, [now], 'seeded once, with the instant of the first request');
});
