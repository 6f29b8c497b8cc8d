import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { IN_FLIGHT_KEY_PREFIX, MemoryInFlightSlots, RedisInFlightSlots } from '../../../src/infra/in-flight/index.js';
import type { InFlightSlots } from '../../../src/domain/in-flight.js';
import { Redis } from 'ioredis';
import { closedPort } from '../net/fixtures/connect-spy.js';
import { eventually } from '../../helpers/eventually.js';

const REDIS_URL = process.env.TEST_REDIS_URL;
let unique = 0;
/** An owner no other test (or earlier run) has used, so a shared Redis holds nothing of it. */
const freshOwner = (): string => `test:${process.pid}:${Date.now()}:${unique++}`;

/** What every backend must do; run against the in-process counter and, when TEST_REDIS_URL is set, Redis. */
function suite(name: string, make: () => InFlightSlots): void {
  describe(`in-flight slots: ${name}`, () => {
    test('max slots per owner; one more is refused; owners are counted apart', async (t) => {
      const slots = make();
      t.after(() => slots.close());
      const a = freshOwner();
      const b = freshOwner();
      const held = [await slots.tryAcquire(a, 2), await slots.tryAcquire(a, 2)];
      assert.ok(held.every((r) => typeof r === 'function'));
      assert.equal(await slots.tryAcquire(a, 2), null);
      assert.equal(typeof (await slots.tryAcquire(b, 2)), 'function', 'another owner has its own');
      held[0]!();
      held[0]!(); // twice is once
      const again = await slots.tryAcquire(a, 2);
      assert.equal(typeof again, 'function', 'a released slot can be taken again');
      assert.equal(await slots.tryAcquire(a, 2), null, 'and only one');
    });
  });
}

suite('memory', () => new MemoryInFlightSlots());

test('Redis unreachable: this instance counts by itself, without asking Redis again per request', async (t) => {
  const port = await closedPort('127.0.0.1');
  const slots = new RedisInFlightSlots(`redis://127.0.0.1:${port}`);
  t.after(() => slots.close());
  const owner = freshOwner();
  const first = await slots.tryAcquire(owner, 1);
  assert.equal(typeof first, 'function', 'admitted on the local count');
  assert.equal(slots.degraded, true);
  assert.equal(await slots.tryAcquire(owner, 1), null, 'and that count still holds the maximum');
  first!();
  assert.equal(typeof (await slots.tryAcquire(owner, 1)), 'function');
});

if (REDIS_URL === undefined) {
  test('in-flight slots: Redis skipped because TEST_REDIS_URL is unset (.ci/run sets it)', { skip: 'TEST_REDIS_URL is unset' }, () => {});
} else {
  const url = REDIS_URL;
  suite('redis', () => new RedisInFlightSlots(url));

  describe('in-flight slots through Redis', () => {
    test('two instances share one count', async (t) => {
      const one = new RedisInFlightSlots(url);
      const two = new RedisInFlightSlots(url);
      t.after(() => Promise.all([one.close(), two.close()]));
      const owner = freshOwner();
      const first = await one.tryAcquire(owner, 2);
      assert.equal(typeof (await two.tryAcquire(owner, 2)), 'function');
      assert.equal(await one.tryAcquire(owner, 2), null, 'the other instance holds the second');
      assert.equal(await two.tryAcquire(owner, 2), null);
      first!();
      // The release is sent without waiting for it; Redis answers commands of one connection in order.
      assert.equal(typeof (await one.tryAcquire(owner, 2)), 'function');
    });

    test("an instance that dies without releasing: its leases lapse and the slots come back", async (t) => {
      const owner = freshOwner();
      const dying = new RedisInFlightSlots(url, { leaseMs: 300, renewMs: 100 });
      assert.equal(typeof (await dying.tryAcquire(owner, 1)), 'function');
      await dying.close(); // never released, never renewed again
      const survivor = new RedisInFlightSlots(url);
      t.after(() => survivor.close());
      assert.equal(await survivor.tryAcquire(owner, 1), null, 'held while the lease runs');
      const got = await eventually(() => survivor.tryAcquire(owner, 1), (release) => release !== null, { intervalMs: 20, what: 'the lapsed lease to no longer count' });
      assert.equal(typeof got, 'function', 'the lapsed lease no longer counts');
    });

    test('a live request renews its lease: its slot stays held past the lease', async (t) => {
      const owner = freshOwner();
      const live = new RedisInFlightSlots(url, { leaseMs: 300, renewMs: 50 });
      const other = new RedisInFlightSlots(url);
      t.after(() => Promise.all([live.close(), other.close()]));
      const release = await live.tryAcquire(owner, 1);
      const redis = new Redis(url);
      t.after(() => redis.disconnect());
      // Watch the lease's expiry move forward rather than wait for a time to pass.
      const score = async (): Promise<number> => Number((await redis.zrange(IN_FLIGHT_KEY_PREFIX + owner, 0, -1, 'WITHSCORES'))[1]);
      const first = await score();
      const later = await eventually(score, (at) => at !== first, { intervalMs: 20, what: 'the lease renewed' });
      assert.ok(later > first, 'renewed');
      assert.equal(await other.tryAcquire(owner, 1), null);
      release!();
      // The release goes out on `live`'s connection without being waited for, and `other` asks on
      // its own: nothing orders the two, so the release is awaited in Redis first.
      await eventually(async () => (await redis.zcard(IN_FLIGHT_KEY_PREFIX + owner)) === 0);
      assert.equal(typeof (await other.tryAcquire(owner, 1)), 'function');
    });
  });
}
