import assert from 'node:assert/strict';
import { test } from 'node:test';
import { MemoryRateLimiter } from '../../../src/infra/ratelimit/memory.js';
import { rateLimiterSuite } from './suite.js';

rateLimiterSuite('memory', async () => new MemoryRateLimiter());

test('memory: a day seed is loaded once per key, and admission stays exact while it loads', async () => {
  let seeds = 0;
  const limiter = new MemoryRateLimiter(async (key) => {
    seeds++;
    await new Promise((r) => setTimeout(r, 10));
    return key === 'busy' ? 495 : 0;
  });
  const limits = { minute: 10, hour: 100, day: 500 };
  const now = Date.UTC(2026, 0, 1, 12);
  const busy = await Promise.all(Array.from({ length: 10 }, () => limiter.consume('busy', limits, now)));
  assert.equal(busy.filter((d) => d.allowed).length, 5, 'only the day’s remaining 5 are admitted');
  assert.equal(busy.find((d) => !d.allowed)?.exceeded?.window, 'day');
  await limiter.consume('idle', limits, now);
  await limiter.consume('idle', limits, now);
  assert.equal(seeds, 2, 'one seed per key');
});
