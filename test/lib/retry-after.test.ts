import assert from 'node:assert/strict';
import { test } from 'node:test';
import { parseHttpDate, retryAfterMs, RETRY_AFTER_MAX_CHARS } from '../../src/lib/retry-after.js';

const NOW = Date.UTC(2026, 10, 28, 2, 0, 0);
const DAY = 86_400_000;

test('delta-seconds: whole seconds from now, capped', () => {
  assert.equal(retryAfterMs('30', NOW, DAY), 30_000);
  assert.equal(retryAfterMs('0', NOW, DAY), 0);
  assert.equal(retryAfterMs(' 120 ', NOW, DAY), 120_000);
  assert.equal(retryAfterMs('0086400', NOW, DAY), DAY);
  assert.equal(retryAfterMs('86401', NOW, DAY), DAY, 'a day and a second is the cap');
  assert.equal(retryAfterMs('31536000', NOW, DAY), DAY, 'a year is the cap');
  assert.equal(retryAfterMs('9'.repeat(RETRY_AFTER_MAX_CHARS), NOW, DAY), DAY, 'more digits than a double holds exactly');
});

test('an HTTP-date in each of the three forms RFC 9110 makes a recipient accept', () => {
  const at = NOW + 90_000;
  const imf = new Date(at).toUTCString();
  assert.equal(imf, 'Sat, 28 Nov 2026 02:01:30 GMT');
  assert.equal(retryAfterMs(imf, NOW, DAY), 90_000);
  assert.equal(retryAfterMs('Saturday, 28-Nov-26 02:01:30 GMT', NOW, DAY), 90_000);
  assert.equal(retryAfterMs('Sat Nov 28 02:01:30 2026', NOW, DAY), 90_000);
  assert.equal(parseHttpDate('Sun Nov  6 08:49:37 1994', NOW), Date.UTC(1994, 10, 6, 8, 49, 37));
  assert.equal(parseHttpDate('Sun, 06 Nov 1994 08:49:37 GMT', NOW), Date.UTC(1994, 10, 6, 8, 49, 37));
  assert.equal(parseHttpDate('Sunday, 06-Nov-94 08:49:37 GMT', NOW), Date.UTC(1994, 10, 6, 8, 49, 37), '94 is 1994, not 2094 (more than 50 years ahead)');
  assert.equal(parseHttpDate('Monday, 01-Jan-46 00:00:00 GMT', NOW), Date.UTC(2046, 0, 1), '46 is 2046 (within 50 years)');
  assert.equal(parseHttpDate('Wed, 31 Dec 2025 23:59:60 GMT', NOW), Date.UTC(2026, 0, 1), 'a leap second is the moment after :59');
});

test('an HTTP-date already past asks no wait; one far ahead is the cap', () => {
  assert.equal(retryAfterMs('Sun, 06 Nov 1994 08:49:37 GMT', NOW, DAY), 0);
  assert.equal(retryAfterMs('Thu, 01 Jan 2099 00:00:00 GMT', NOW, DAY), DAY);
});

test('anything else is no Retry-After at all (null): the schedule alone decides', () => {
  for (const value of [
    '',
    '   ',
    '-1',
    '1.5',
    '+30',
    '30s',
    '0x10',
    '1e3',
    'soon',
    'Sat, 28 Nov 2026 02:01:30 UTC',
    'Sat, 28 Nov 2026 02:01:30',
    'Sat, 28 Nov 26 02:01:30 GMT',
    'sat, 28 nov 2026 02:01:30 gmt',
    '2026-11-28T02:01:30Z',
    'Sat, 31 Feb 2026 02:01:30 GMT',
    'Sat, 28 Nov 2026 24:00:00 GMT',
    'Sat, 28 Nov 2026 02:60:00 GMT',
    'Sat, 28 Foo 2026 02:01:30 GMT',
    `${'1'.repeat(RETRY_AFTER_MAX_CHARS + 1)}`,
    `Sat, 28 Nov 2026 02:01:30 GMT${' '.repeat(RETRY_AFTER_MAX_CHARS)}x`,
  ]) {
    assert.equal(retryAfterMs(value, NOW, DAY), null, JSON.stringify(value));
  }
});

test('a hostile value of any length is refused by its length, before any pattern runs', () => {
  const huge = `Sat, ${'0'.repeat(1 << 20)}`;
  assert.equal(retryAfterMs(huge, NOW, DAY), null);
  assert.equal(parseHttpDate(huge, NOW), null);
});
