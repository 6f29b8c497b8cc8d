import assert from 'node:assert/strict';
import { randomInt } from 'node:crypto';
import { test } from 'node:test';
import { Redis } from 'ioredis';
import { RedisRateLimiter, unrecordedKey } from '../../../src/infra/ratelimit/redis.js';
import { eventually } from '../../helpers/eventually.js';

/**
 * The calls an instance admitted and had not recorded when it went away are given back by the
 * reconcile of another instance; those it recorded or refunded are not, and neither are the
 * calls of an instance that lives.
 */

const redisUrl = process.env.TEST_REDIS_URL;
if (!redisUrl) {
  test('unrecorded calls: skipped because TEST_REDIS_URL is unset', { skip: 'TEST_REDIS_URL is unset' }, () => {});
} else {
  test('an instance that went away: its unrecorded calls are given back, its recorded and refunded ones are not; a live one keeps its own', async (t) => {
    // An account of this test's own in the shared Redis, on a day in the past.
    const key = `acct:${randomInt(1e9, 2e9)}`;
    const now = Date.UTC(2005, 0, 1, 12, 0, 30) + randomInt(0, 1000) * 86_400_000;
    const limits = { minute: 100, hour: 1000, day: 10_000 };
    const recorded = { minute: 0, hour: 0, day: 0 };
    const opts = { seed: async () => ({ ...recorded }), recordsCallsOf: () => true, reconcileMs: 600_000, now: () => now };
    const first = new RedisRateLimiter(redisUrl, opts);
    const second = new RedisRateLimiter(redisUrl, opts);
    t.after(() => second.close());
    const used = async (limiter: RedisRateLimiter) => (await limiter.peek(key, limits, now)).map((w) => w.used);

    for (let i = 0; i < 5; i++) assert.equal((await first.consume(key, limits, now)).allowed, true);
    // Two answered (their records written), one refunded (refused after all): two are left unrecorded.
    first.recorded([
      { key, at: now },
      { key, at: now },
    ]);
    recorded.minute = recorded.hour = recorded.day = 2;
    await first.refund(key, now);
    for (let i = 0; i < 3; i++) assert.equal((await second.consume(key, limits, now)).allowed, true);
    assert.deepEqual(await used(second), [7, 7, 7]);

    // The first goes away (a close ends its heartbeat as a kill lets it lapse).
    await first.close();
    await second.reconcile();
    assert.deepEqual(await used(second), [5, 5, 5], "the first's two unrecorded calls were given back; the second's three stay");

    // Another instance reconciles: the second lives, so nothing more is given back.
    const third = new RedisRateLimiter(redisUrl, opts);
    t.after(() => third.close());
    await third.reconcile();
    assert.deepEqual(await used(third), [5, 5, 5]);
  });

  test('calls recorded while the instance counts by itself (Redis still connected) leave its unrecorded calls: a reconcile never gives them back', async (t) => {
    const key = `acct:${randomInt(1e9, 2e9)}`;
    const now = Date.UTC(2005, 0, 1, 12, 0, 30) + randomInt(0, 1000) * 86_400_000;
    const limits = { minute: 100, hour: 1000, day: 10_000 };
    const limiter = new RedisRateLimiter(redisUrl, { seed: async () => ({ minute: 0, hour: 0, day: 0 }), recordsCallsOf: () => true, reconcileMs: 600_000, now: () => now });
    const redis = new Redis(redisUrl);
    t.after(async () => {
      await limiter.close();
      redis.disconnect();
    });
    for (let i = 0; i < 3; i++) assert.equal((await limiter.consume(key, limits, now)).allowed, true);
    const instance = (limiter as unknown as { instance: string }).instance;
    const pending = async () => Object.values(await redis.hgetall(unrecordedKey(instance))).reduce((sum, n) => sum + Number(n), 0);
    assert.equal(await pending(), 9, 'three calls, each in three windows');
    // A false alarm (a command that failed while the connection stayed up): degraded, still connected.
    (limiter as unknown as { connection: { degrade(err: unknown): void } }).connection.degrade(new Error('a slow command'));
    assert.equal(limiter.redisState(), 'degraded');
    limiter.recorded([
      { key, at: now },
      { key, at: now },
      { key, at: now },
    ]);
    await eventually(pending, (n) => n === 0, { what: 'the recorded calls taken off the unrecorded hash' });
  });

  test('calls admitted by the instance alone and recorded after Redis came back: the shared windows count them exactly, and Redis\' unrecorded calls stay its own', async (t) => {
    const key = `acct:${randomInt(1e9, 2e9)}`;
    const now = Date.UTC(2005, 0, 1, 12, 0, 30) + randomInt(0, 1000) * 86_400_000;
    const limits = { minute: 100, hour: 1000, day: 10_000 };
    let written = 0;
    const seed = async () => ({ minute: written, hour: written, day: written });
    const limiter = new RedisRateLimiter(redisUrl, { seed, recordsCallsOf: () => true, reconcileMs: 600_000, now: () => now });
    const redis = new Redis(redisUrl);
    t.after(async () => {
      await limiter.close();
      redis.disconnect();
    });
    const instance = (limiter as unknown as { instance: string }).instance;
    const pending = async () => Object.values(await redis.hgetall(unrecordedKey(instance))).reduce((sum, n) => sum + Number(n), 0);
    const used = async () => (await limiter.peek(key, limits, now)).map((w) => w.used);

    // One call through Redis, recorded.
    assert.equal((await limiter.consume(key, limits, now)).allowed, true);
    written = 1;
    limiter.recorded([{ key, at: now }]);
    await eventually(pending, (n) => n === 0, { what: 'the first call recorded' });
    // A false alarm: two calls admitted by this instance alone, their records not written yet.
    (limiter as unknown as { connection: { degrade(err: unknown): void } }).connection.degrade(new Error('a slow command'));
    for (let i = 0; i < 2; i++) assert.equal((await limiter.consume(key, limits, now)).allowed, true);
    await eventually(() => limiter.redisState() === 'ok', { what: 'Redis answering again (its PING probe)' });

    // Back in Redis: the windows are rebuilt from the record (1) and the two calls not yet recorded.
    assert.equal((await limiter.consume(key, limits, now)).allowed, true);
    assert.deepEqual(await used(), [4, 4, 4], 'every call admitted counts, recorded or not yet');
    // The two records land: nothing is taken off the calls admitted in Redis (the fourth).
    written = 3;
    limiter.recorded([
      { key, at: now },
      { key, at: now },
    ]);
    // Sent after anything recorded() sent, on the same connection: the hash is read after both.
    assert.equal((await limiter.consume(key, limits, now)).allowed, true);
    assert.equal(await pending(), 6, 'the fourth and fifth calls, in three windows each, are still unrecorded');
    assert.deepEqual(await used(), [5, 5, 5]);
  });
}
