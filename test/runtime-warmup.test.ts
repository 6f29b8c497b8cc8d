import assert from 'node:assert/strict';
import { test } from 'node:test';
import { WARMUP_ROUNDS, WARMUP_TICKS_PER_ROUND, warmUpNextTick } from '../src/lib/next-tick-warmup.js';

test('the nextTick warm-up makes its calls, lets them run, and leaves nothing queued', async () => {
  assert.equal(await warmUpNextTick(), WARMUP_ROUNDS * WARMUP_TICKS_PER_ROUND);
  // A tick queued now runs before a timer: the queue is not backed up behind the warm-up.
  const order: string[] = [];
  await new Promise<void>((resolve) => {
    setTimeout(() => {
      order.push('timer');
      resolve();
    }, 0);
    process.nextTick(() => order.push('tick'));
  });
  assert.deepEqual(order, ['tick', 'timer']);
});
