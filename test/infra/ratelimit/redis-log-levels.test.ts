import assert from 'node:assert/strict';
import { test } from 'node:test';
import { freePort } from '../../helpers/free-port.js';
import { hasRedisServer, startRedisServer } from '../../helpers/redis-server.js';
import { eventually } from '../../helpers/eventually.js';
import { RedisRateLimiter } from '../../../src/infra/ratelimit/redis.js';

/**
 * Redis going away and coming back is expected in operation: the rate limiter says so once at
 * `warn` and once at `info`, never at `error` (a captured logger with every level).
 */

test(
  'the rate limiter logs Redis lost at warn and Redis back at info, never at error',
  { skip: hasRedisServer ? false : 'needs redis-server (the test starts one of its own)' },
  async (t) => {
    const port = await freePort();
    let server = await startRedisServer(t, port);
    const lines: Array<[string, string]> = [];
    const at = (level: string) => (_o: object, msg: string) => lines.push([level, msg]);
    const log = { error: at('error'), warn: at('warn'), info: at('info') };
    const limiter = new RedisRateLimiter(`redis://127.0.0.1:${port}`, { log });
    t.after(() => limiter.close());
    const limits = { minute: 10, hour: 100, day: 500 };
    const now = Date.UTC(2026, 2, 4, 5, 6, 7);
    assert.equal((await limiter.consume('ip:192.0.2.1', limits, now)).allowed, true);

    server.kill('SIGKILL');
    await new Promise((resolve) => server.once('exit', resolve));
    await eventually(() => limiter.redisState() === 'degraded');
    assert.equal((await limiter.consume('ip:192.0.2.1', limits, now)).allowed, true, 'limited by the instance alone');

    server = await startRedisServer(t, port);
    await eventually(() => limiter.redisState() === 'ok', { timeoutMs: 10_000 });
    assert.equal(limiter.redisState(), 'ok');
    assert.deepEqual(
      lines.map(([level]) => level),
      ['warn', 'info'],
      `lines: ${JSON.stringify(lines)}`,
    );
  },
);
