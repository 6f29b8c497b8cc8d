import assert from 'node:assert/strict';
import { test } from 'node:test';
import { setTimeout as sleep } from 'node:timers/promises';
import { unlessAborted, withDeadline } from '../../src/lib/deadline.js';

test('withDeadline: the work when it settles first, its rejection too', async () => {
  assert.equal(await withDeadline(Promise.resolve(1), 1_000, () => 'late'), 1);
  await assert.rejects(withDeadline(Promise.reject(new Error('boom')), 1_000, () => 'late'), /boom/);
});

test('withDeadline: past the deadline, what onTimeout returns or throws; the late work rejects unheard', async () => {
  assert.equal(await withDeadline(sleep(200).then(() => 1), 10, () => null), null);
  const late = sleep(50).then(() => {
    throw new Error('late failure');
  });
  await assert.rejects(
    withDeadline(late, 10, () => {
      throw new Error('too slow');
    }),
    /too slow/,
  );
  await sleep(80); // an unhandled rejection would fail the test run here
});

test('unlessAborted: the work unless the signal aborts first, or already has', async () => {
  const ac = new AbortController();
  assert.equal(await unlessAborted(Promise.resolve(1), ac.signal), 1);
  const pending = unlessAborted(sleep(200), ac.signal, () => new Error('gone'));
  ac.abort();
  await assert.rejects(pending, /gone/);
  await assert.rejects(unlessAborted(Promise.reject(new Error('ignored')), ac.signal, () => new Error('already gone')), /already gone/);
  const reasoned = new AbortController();
  reasoned.abort(new Error('the reason'));
  await assert.rejects(unlessAborted(sleep(10), reasoned.signal), /the reason/);
  await sleep(20);
});
