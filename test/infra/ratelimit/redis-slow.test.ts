import assert from 'node:assert/strict';
import { test } from 'node:test';
import { freePort } from '../../helpers/free-port.js';
import { hasRedisServer, startRedisServer } from '../../helpers/redis-server.js';
import { startDelayProxy } from '../../helpers/delay-proxy.js';
import { eventually } from '../../helpers/eventually.js';
import { RedisRateLimiter } from '../../../src/infra/ratelimit/redis.js';
import { RedisInFlightSlots } from '../../../src/infra/in-flight/redis.js';

/**
 * A Redis that is slow but alive (every byte held a while by a loopback proxy, as on a loaded
 * machine) is waited for: two instances sharing it admit exactly the limit between them and
 * neither switches to limiting by itself. A Redis that dies is still seen at once from its
 * connection, and the instances limit by themselves.
 */

/** Each chunk's delay each way: a round trip of about 2 s, past the former 500 ms command timeout. */
const SLOW_MS = 1_000;
const LIMIT = 5;
/** Calls sent at once, through both instances: well over the limit. */
const CALLS = 16;

if (!hasRedisServer) {
  test('slow Redis: skipped because redis-server is not installed', { skip: 'redis-server not found' }, () => {});
} else {
  test('a slow Redis is waited for (limits exact across instances, no switch to local limiting); a dead one is still left at once', async (t) => {
    const redisPort = await freePort();
    const redis = await startRedisServer(t, redisPort);
    const proxy = await startDelayProxy(t, { host: '127.0.0.1', port: redisPort });
    const url = `redis://127.0.0.1:${proxy.port}`;
    const warnings: string[] = [];
    const log = { warn: (_o: object, msg: string) => void warnings.push(msg), info: () => undefined };
    const a = new RedisRateLimiter(url, { log });
    const b = new RedisRateLimiter(url, { log });
    const slots = new RedisInFlightSlots(url, { log });
    t.after(async () => {
      await a.close();
      await b.close();
      await slots.close();
    });
    const limits = { minute: LIMIT, hour: 1000, day: 10_000 };
    const now = Date.UTC(2006, 0, 1, 12, 0, 30);
    // Connected while fast; then every byte is held SLOW_MS each way.
    assert.equal((await a.consume('warm', limits, now)).allowed, true);
    assert.equal((await b.consume('warm', limits, now)).allowed, true);
    const release = await slots.tryAcquire('warm', 1);
    assert.ok(release);
    release();
    proxy.delayMs = SLOW_MS;

    const decisions = await Promise.all(Array.from({ length: CALLS }, (_, i) => (i % 2 === 0 ? a : b).consume('acct:slow', limits, now)));
    assert.equal(decisions.filter((d) => d.allowed).length, LIMIT, 'exactly the limit admitted between the two instances');
    const slot = await slots.tryAcquire('acct:slow', 1);
    assert.ok(slot, 'a slot is taken through the slow Redis');
    assert.equal(await slots.tryAcquire('acct:slow', 1), null, 'and counted there: the second is refused');
    slot();
    assert.deepEqual([a.redisState(), b.redisState(), slots.degraded], ['ok', 'ok', false], 'nobody switched to counting by itself');
    assert.deepEqual(warnings, []);

    // Redis dies: its connection says so, and each instance limits by itself from then on.
    proxy.delayMs = 0;
    redis.kill('SIGKILL');
    await eventually(() => a.redisState() === 'degraded' && b.redisState() === 'degraded', { what: 'both instances degraded once Redis died' });
    assert.equal((await a.consume('acct:after', limits, now)).allowed, true, 'the fallback admits');
  });
}
