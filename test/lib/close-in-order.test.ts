import assert from 'node:assert/strict';
import { test } from 'node:test';
import { closeInOrder } from '../../src/lib/close-in-order.js';

test('closeInOrder: every step runs in order, after a failure too', async () => {
  const ran: string[] = [];
  await closeInOrder([() => void ran.push('a'), async () => void ran.push('b'), () => void ran.push('c')]);
  assert.deepEqual(ran, ['a', 'b', 'c']);
});

test('closeInOrder: one failure is rethrown as it was, once every step has run', async () => {
  const ran: string[] = [];
  const failure = new Error('queue would not close');
  await assert.rejects(
    closeInOrder([
      () => void ran.push('a'),
      async () => {
        throw failure;
      },
      () => void ran.push('c'),
    ]),
    (err) => err === failure,
  );
  assert.deepEqual(ran, ['a', 'c']);
});

test('closeInOrder: several failures are one AggregateError holding each, in order', async () => {
  const first = new Error('first');
  const second = new Error('second');
  const ran: string[] = [];
  await assert.rejects(
    closeInOrder([
      () => {
        throw first;
      },
      () => void ran.push('b'),
      async () => {
        throw second;
      },
    ]),
    (err) => err instanceof AggregateError && err.errors.length === 2 && err.errors[0] === first && err.errors[1] === second,
  );
  assert.deepEqual(ran, ['b']);
});
