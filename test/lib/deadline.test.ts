import assert from 'node:assert/strict';
import { test, type TestContext } from 'node:test';
import { unlessAborted, withDeadline } from '../../src/lib/deadline.js';

/** A promise the test settles by hand: work that ends exactly when the test says, not after a time. */
function deferred<T = void>(): { promise: Promise<T>; resolve: (value: T) => void; reject: (err: unknown) => void } {
  let resolve!: (value: T) => void;
  let reject!: (err: unknown) => void;
  const promise = new Promise<T>((res, rej) => {
    resolve = res;
    reject = rej;
  });
  return { promise, resolve, reject };
}

/** One turn of the event loop: past the microtasks, and past the report of any rejection nobody handled. */
const turn = () => new Promise((resolve) => setImmediate(resolve));

/** The rejections nobody handled while the test runs, read after a turn (Node reports them once the microtasks have run). */
function unhandledRejections(t: TestContext): () => Promise<unknown[]> {
  const seen: unknown[] = [];
  const onRejection = (err: unknown) => seen.push(err);
  process.on('unhandledRejection', onRejection);
  t.after(() => process.off('unhandledRejection', onRejection));
  return async () => {
    await turn();
    return seen;
  };
}

test('withDeadline: the work when it settles first, its rejection too', async () => {
  assert.equal(await withDeadline(Promise.resolve(1), 1_000, () => 'late'), 1);
  await assert.rejects(withDeadline(Promise.reject(new Error('boom')), 1_000, () => 'late'), /boom/);
});

test('withDeadline: past the deadline, what onTimeout returns or throws; the late work rejects unheard', async (t) => {
  // The deadline's timer is node's mock: the test moves time, nothing waits for it.
  t.mock.timers.enable({ apis: ['setTimeout'] });
  const unhandled = unhandledRejections(t);
  const slow = deferred<number>();
  let settled = false;
  const first = withDeadline(slow.promise, 10, () => null).finally(() => (settled = true));
  t.mock.timers.tick(9);
  await turn();
  assert.equal(settled, false, 'not before the deadline');
  t.mock.timers.tick(1);
  assert.equal(await first, null);
  slow.resolve(1);

  const late = deferred<never>();
  const second = withDeadline(late.promise, 10, () => {
    throw new Error('too slow');
  });
  t.mock.timers.tick(10);
  await assert.rejects(second, /too slow/);
  late.reject(new Error('late failure'));
  assert.deepEqual(await unhandled(), [], 'the late failure is handled');
});

test('unlessAborted: the work unless the signal aborts first, or already has; the losing work rejects unheard', async (t) => {
  const unhandled = unhandledRejections(t);
  const ac = new AbortController();
  assert.equal(await unlessAborted(Promise.resolve(1), ac.signal), 1);
  const work = deferred();
  const pending = unlessAborted(work.promise, ac.signal, () => new Error('gone'));
  ac.abort();
  await assert.rejects(pending, /gone/);
  work.reject(new Error('late failure'));
  await assert.rejects(unlessAborted(Promise.reject(new Error('ignored')), ac.signal, () => new Error('already gone')), /already gone/);
  const reasoned = new AbortController();
  reasoned.abort(new Error('the reason'));
  const after = deferred();
  await assert.rejects(unlessAborted(after.promise, reasoned.signal), /the reason/);
  after.reject(new Error('late failure too'));
  assert.deepEqual(await unhandled(), [], 'every losing work is handled');
});
