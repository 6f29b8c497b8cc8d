import assert from 'node:assert/strict';
import { join } from 'node:path';
import { test } from 'node:test';
import { tempDir } from '../../helpers/build.js';
import { clockAtMinuteStart, createAccountToken } from '../../helpers/accounts-cli.js';
import { freePort } from '../../helpers/free-port.js';
import { serve, type Served } from '../../helpers/serve.js';
import { hasRedisServer, startRedisServer as startRedis } from '../../helpers/redis-server.js';
import { PLANS } from '../../../src/domain/accounts/plans.js';
import { RedisRateLimiter } from '../../../src/infra/ratelimit/redis.js';
import { eventually } from '../../helpers/eventually.js';

/**
 * Redis goes away under traffic and comes back empty, with a real `netdiag serve` and a Redis of
 * the test's own (the shared one at TEST_REDIS_URL is never stopped).
 */

const FREE_PER_MINUTE = PLANS.free.requests_per_minute;
/** Polls of /readyz while waiting for the server to find the restarted Redis (a failure message, not a timing bound). */
/** How long Redis may take to be used again once it is back (a failure message, not a bound). */
const READY_MS = 10_000;
const READY_POLL_MS = 50;
const WARN = 'Redis does not answer';
const BACK = 'Redis answers again';

async function get(s: Served, path: string, token?: string): Promise<{ status: number; body: Record<string, unknown> }> {
  const res = await fetch(`http://127.0.0.1:${s.port}${path}`, token ? { headers: { authorization: `Bearer ${token}` } } : {});
  return { status: res.status, body: (await res.json()) as Record<string, unknown> };
}

/** /readyz's body without its GeoIP build dates (the bundled data's, whatever version is installed) and which path tools run here. */
const withoutGeo = (r: { status: number; body: Record<string, unknown> }) => {
  const { geoip: _geoip, path_tools: _pathTools, ...body } = r.body;
  return { status: r.status, body };
};

const callsUsed = (r: { body: Record<string, unknown> }) => (r.body.data as { api_calls_used: number }).api_calls_used;
const count = (text: string, needle: string) => text.split(needle).length - 1;

if (!hasRedisServer) {
  test('redis outage: skipped because redis-server is not installed', { skip: 'redis-server not found' }, () => {});
} else {
  test('Redis stops under traffic, then comes back empty: no 500, limits hold throughout, /readyz says degraded', async (t) => {
    const redisPort = await freePort();
    let redis = await startRedis(t, redisPort);
    const databaseUrl = `sqlite:${join(tempDir(t), 'outage.db')}`;
    const free = await createAccountToken(databaseUrl, 'free@example.com', 'free');
    const big = await createAccountToken(databaseUrl, 'big@example.com', 'enterprise');
    // The steps take a few seconds: the server's clock starts them at the first second of a minute, so they share one.
    const s = await serve(join(tempDir(t), 'unused.db'), false, { DATABASE_URL: databaseUrl, REDIS_URL: `redis://127.0.0.1:${redisPort}`, ...clockAtMinuteStart() });
    t.after(() => s.child.kill('SIGKILL'));

    // Shared windows in Redis.
    for (let i = 0; i < 4; i++) assert.equal((await get(s, '/api/user', free)).status, 200);
    for (let i = 0; i < 3; i++) assert.equal((await get(s, '/api/user', big)).status, 200);
    assert.deepEqual(withoutGeo(await get(s, '/readyz')), { status: 200, body: { status: 'ready' } });

    // Redis dies while calls are in flight: every one of them is answered, none with a 5xx.
    const inFlight = Array.from({ length: 20 }, () => get(s, '/api/user', big));
    redis.kill('SIGKILL');
    const statuses = (await Promise.all(inFlight)).map((r) => r.status);
    assert.deepEqual([...new Set(statuses)], [200], `statuses while Redis died: ${statuses.join(',')}`);

    // Limited by the instance alone, from the recorded usage: the free account had 4 of its 10.
    const degraded: number[] = [];
    for (let i = 0; i < FREE_PER_MINUTE; i++) degraded.push((await get(s, '/api/user', free)).status);
    assert.deepEqual(degraded, [...Array(FREE_PER_MINUTE - 4).fill(200), ...Array(4).fill(429)], 'the same plan figures, counted from the recorded calls');
    assert.deepEqual(withoutGeo(await get(s, '/readyz')), { status: 200, body: { status: 'ready', redis: 'degraded' } });
    const user = await get(s, '/api/user', big);
    const stats = await get(s, '/api/usage/stats', big);
    assert.equal(callsUsed(stats), callsUsed(user) + 1, 'GET /user and /usage/stats give one figure (each counts itself)');
    const bigBefore = callsUsed(stats);

    // Redis comes back empty.
    redis = await startRedis(t, redisPort);
    const ready = await eventually(async () => (await get(s, '/readyz')).body, (body) => !('redis' in (body as object)), {
      timeoutMs: READY_MS,
      intervalMs: READY_POLL_MS,
      what: '/readyz without a Redis note',
    });
    assert.deepEqual(withoutGeo({ status: 200, body: ready }).body, { status: 'ready' }, 'the server went back to Redis');
    const after = await get(s, '/api/user', free);
    assert.equal(after.status, 429, 'the free account, at its minute limit, stays limited although Redis lost every count');
    const userAgain = await get(s, '/api/user', big);
    assert.equal(callsUsed(userAgain), bigBefore + 1, "the day window was rebuilt from the recorded calls, not restarted from 0");
    assert.equal(callsUsed(await get(s, '/api/usage/stats', big)), callsUsed(userAgain) + 1);

    const log = s.stdout();
    assert.equal(count(log, WARN), 1, 'one warning when Redis went away, not one per request');
    assert.equal(count(log, BACK), 1, 'one line when it came back');
    s.child.kill('SIGTERM');
    await s.exited;
  });

  test('a Redis that hangs (SIGSTOP): requests time out into the per-instance limiter; once it answers, its windows are raised to the recorded usage', async (t) => {
    const port = await freePort();
    const redis = await startRedis(t, port);
    t.after(() => redis.kill('SIGCONT'));
    const recorded = { minute: 0, hour: 0, day: 0 };
    const lines: string[] = [];
    const log = { warn: (_o: object, msg: string) => lines.push(msg), info: (_o: object, msg: string) => lines.push(msg) };
    const limiter = new RedisRateLimiter(`redis://127.0.0.1:${port}`, { seed: async () => ({ ...recorded }), log });
    t.after(() => limiter.close());
    const limits = { minute: 10, hour: 100, day: 500 };
    const now = Date.UTC(2026, 2, 4, 5, 6, 7);
    const record = (n: number) => {
      recorded.minute += n;
      recorded.hour += n;
      recorded.day += n;
    };
    // What the usage record would hold after each admitted call: here the test records them.
    for (let i = 0; i < 2; i++) assert.equal((await limiter.consume('acct:1', limits, now)).allowed, true);
    record(2);
    assert.equal(limiter.redisState(), 'ok');

    redis.kill('SIGSTOP');
    const during = [];
    for (let i = 0; i < 3; i++) during.push(await limiter.consume('acct:1', limits, now));
    assert.deepEqual(during.map((d) => d.windows[0]!.used), [3, 4, 5], 'counted by the instance, on top of the recorded 2');
    record(3);
    assert.equal(limiter.redisState(), 'degraded');

    redis.kill('SIGCONT');
    await eventually(() => limiter.redisState() === 'ok', { timeoutMs: READY_MS, intervalMs: READY_POLL_MS, what: 'the limiter back on Redis' });
    assert.equal(limiter.redisState(), 'ok', 'back to Redis once it answers');
    const back = await limiter.consume('acct:1', limits, now);
    assert.equal(back.windows[0]!.used, 6, 'the calls admitted while Redis hung count in Redis too');
    assert.deepEqual(lines.map((l) => (l.includes(WARN) ? 'warn' : l.includes(BACK) ? 'back' : l)), ['warn', 'back']);
  });
}

test('a Redis that never answers: every consume is answered by the instance alone, seeded, with one warning', async (t) => {
  const port = await freePort(); // nothing listens there
  const lines: Array<[string, string]> = [];
  const log = { warn: (_o: object, msg: string) => lines.push(['warn', msg]), info: (_o: object, msg: string) => lines.push(['info', msg]) };
  const limiter = new RedisRateLimiter(`redis://127.0.0.1:${port}`, { seed: async () => ({ minute: 8, hour: 8, day: 8 }), log });
  t.after(() => limiter.close());
  const limits = { minute: 10, hour: 100, day: 500 };
  const now = Date.UTC(2026, 2, 4, 5, 6, 7);
  const decisions = await Promise.all(Array.from({ length: 5 }, () => limiter.consume('acct:1', limits, now)));
  assert.equal(decisions.filter((d) => d.allowed).length, 2, 'the recorded 8 of 10 count');
  assert.equal(limiter.redisState(), 'degraded');
  assert.deepEqual((await limiter.peek('acct:1', limits, now)).map((w) => w.used), [10, 10, 10]);
  assert.equal(lines.filter(([level]) => level === 'warn').length, 1, 'one warning, not one per request');
  assert.ok(lines[0]![1].includes(WARN));
});
