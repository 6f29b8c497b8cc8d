import assert from 'node:assert/strict';
import { test } from 'node:test';
import { TOKEN_TOUCH_FLUSH_MS, TouchBuffer } from '../../../src/infra/store/tokens.js';

const turn = () => new Promise<void>((resolve) => setImmediate(resolve));

test('a failed timed flush of last-used times is reported, and its touches go out with the next one', async (t) => {
  t.mock.timers.enable({ apis: ['setInterval'] });
  const written: Array<Array<[number, string]>> = [];
  let failNext = true;
  const buffer = new TouchBuffer((batch) => {
    if (failNext) {
      failNext = false;
      throw new Error('database is locked');
    }
    written.push(batch);
  });
  const reported: unknown[] = [];
  buffer.onError = (err) => reported.push(err);

  buffer.touch(1, Date.UTC(2026, 0, 1));
  buffer.touch(2, Date.UTC(2026, 0, 2));
  t.mock.timers.tick(TOKEN_TOUCH_FLUSH_MS);
  await turn();
  assert.equal(reported.length, 1);
  assert.match(String((reported[0] as Error).message), /database is locked/);
  assert.deepEqual(written, []);

  buffer.touch(1, Date.UTC(2026, 0, 3)); // newer than the one that failed: it wins
  t.mock.timers.tick(TOKEN_TOUCH_FLUSH_MS);
  await turn();
  assert.deepEqual(written, [
    [
      [1, '2026-01-03T00:00:00.000Z'],
      [2, '2026-01-02T00:00:00.000Z'],
    ],
  ]);
  assert.equal(reported.length, 1);
  await buffer.close();
});

test('a run of failed flushes (the database is down) is reported once, and again after a flush succeeded', async (t) => {
  t.mock.timers.enable({ apis: ['setInterval'] });
  let fail = true;
  const buffer = new TouchBuffer(() => {
    if (fail) throw new Error('connect ECONNREFUSED');
  });
  const reported: unknown[] = [];
  buffer.onError = (err) => reported.push(err);
  const flushOnce = async () => {
    buffer.touch(1, Date.UTC(2026, 0, 1));
    t.mock.timers.tick(TOKEN_TOUCH_FLUSH_MS);
    await turn();
  };
  await flushOnce();
  await flushOnce();
  await flushOnce();
  assert.equal(reported.length, 1);
  fail = false;
  await flushOnce();
  fail = true;
  await flushOnce();
  assert.equal(reported.length, 2);
  fail = false;
  await buffer.close();
});
