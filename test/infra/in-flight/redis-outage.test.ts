import assert from 'node:assert/strict';
import { test } from 'node:test';
import { Redis } from 'ioredis';
import { IN_FLIGHT_KEY_PREFIX, createInFlightSlots, RedisInFlightSlots } from '../../../src/infra/in-flight/index.js';
import { hasRedisServer, startRedisServer } from '../../helpers/redis-server.js';
import { closedPort } from '../net/fixtures/connect-spy.js';
import { eventually } from '../../helpers/eventually.js';

/** Acquires made while Redis is away: each of them must be answered, and none may log again. */
const ACQUIRES_WHILE_AWAY = 20;

test(
  'Redis stops under use, then comes back: slots keep working, one warning when counting locally, one line when Redis is back',
  { skip: hasRedisServer ? false : 'needs redis-server (the test starts one of its own)' },
  async (t) => {
    const port = await closedPort('127.0.0.1');
    const url = `redis://127.0.0.1:${port}`;
    let server = await startRedisServer(t, port);
    const lines: Array<['warn' | 'info', string]> = [];
    const log = { warn: (_o: object, msg: string) => lines.push(['warn', msg]), info: (_o: object, msg: string) => lines.push(['info', msg]) };
    // Built as the app builds it, so the logger is known to reach the Redis counter.
    const slots = createInFlightSlots(url, log);
    assert.ok(slots instanceof RedisInFlightSlots);
    t.after(() => slots.close());
    const owner = `test:${process.pid}:outage`;

    const before = await slots.tryAcquire(owner, 2);
    assert.equal(typeof before, 'function');
    assert.equal(slots.degraded, false);
    assert.equal(lines.length, 0, 'nothing logged while Redis answers');

    server.kill('SIGKILL');
    await new Promise((resolve) => server.once('exit', resolve));
    for (let i = 0; i < ACQUIRES_WHILE_AWAY; i++) {
      const release = await slots.tryAcquire(owner, 2);
      assert.equal(typeof release, 'function', `acquire ${i} answered on the local count`);
      release!();
    }
    before!(); // a release that cannot reach Redis does not throw either
    assert.equal(slots.degraded, true);
    assert.deepEqual(lines.map(([level]) => level), ['warn'], 'one warning, not one per request');

    server = await startRedisServer(t, port);
    await eventually(() => !slots.degraded);
    assert.equal(slots.degraded, false, 'back to Redis once it answers');
    const after = await slots.tryAcquire(owner, 2);
    assert.equal(typeof after, 'function');
    const probe = new Redis(url);
    t.after(() => probe.disconnect());
    assert.equal(await probe.zcard(IN_FLIGHT_KEY_PREFIX + owner), 1, 'the slot is counted in Redis again');
    after!();
    assert.deepEqual(lines.map(([level]) => level), ['warn', 'info'], 'one line when Redis came back');
    assert.ok(lines[0]![1].includes('this instance alone'));
    assert.ok(lines[1]![1].includes('across instances again'));
  },
);
