import assert from 'node:assert/strict';
import { test } from 'node:test';
import { REPEAT_FILTER_MAX_MESSAGES, withoutRepeats } from '../src/lib/repeat-filter.js';

test('withoutRepeats: one report per message per interval, others pass, memory bounded', () => {
  let now = 0;
  const seen: string[] = [];
  const report = withoutRepeats((err) => seen.push((err as Error).message), 1_000, () => now);
  report(new Error('db down'));
  report(new Error('db down'));
  report(new Error('redis down'));
  now = 999;
  report(new Error('db down'));
  now = 1_001;
  report(new Error('db down'));
  assert.deepEqual(seen, ['db down', 'redis down', 'db down']);
  for (let i = 0; i < REPEAT_FILTER_MAX_MESSAGES * 3; i++) report(`m${i}`);
  assert.equal(seen.length, 3 + REPEAT_FILTER_MAX_MESSAGES * 3, 'distinct messages all pass');
});
