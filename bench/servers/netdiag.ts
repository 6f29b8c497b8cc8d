import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { composeApp } from '../../src/compose-app.js';
import { loadConfig } from '../../src/config.js';
import { AccountService } from '../../src/domain/accounts/service.js';
import { openStore } from '../../src/infra/store/index.js';
import { MemoryRateLimiter } from '../../src/infra/ratelimit/memory.js';
import { RedisRateLimiter } from '../../src/infra/ratelimit/redis.js';
import { openPostgresStore } from '../../src/infra/store/postgres.js';
import pg from 'pg';
import { decide, type RateLimiter } from '../../src/domain/usage/rate-limit.js';

/**
 * The plans' limits would make a load test a 429 test. This limiter does exactly the work
 * of the real one (it is the real one) with windows too large to fill in a benchmark run.
 */
class UnboundedLimits implements RateLimiter {
  private readonly inner = new MemoryRateLimiter();
  consume: RateLimiter['consume'] = (key, _limits, now) => this.inner.consume(key, BIG, now);
  peek: RateLimiter['peek'] = (key, _limits, now) => this.inner.peek(key, BIG, now);
  refund = (key: string, now: number) => this.inner.refund(key, now);
  close = () => this.inner.close();
}
const BIG = { minute: 1e12, hour: 1e12, day: 1e12 };

/** The Redis limiter (one script round trip per request, as in production) with the same too-large windows. */
class UnboundedRedis implements RateLimiter {
  constructor(private readonly inner: RedisRateLimiter) {}
  consume: RateLimiter['consume'] = (key, _limits, now) => this.inner.consume(key, BIG, now);
  peek: RateLimiter['peek'] = (key, _limits, now) => this.inner.peek(key, BIG, now);
  /** As the real one has (a request refused for work in flight is taken back). */
  refund = (key: string, now: number) => this.inner.refund(key, now);
  close = () => this.inner.close();
}

/**
 * BENCH_PARTS=admit-all: a limiter that admits everything without counting, and a usage write
 * that does nothing. Each response still gets its X-RateLimit-* headers and waits for its group
 * commit: issue 3's hooks without their storage work (the split used for issue 2 until session 4).
 */
class AdmitAll implements RateLimiter {
  consume: RateLimiter['consume'] = async (_key, _limits, now) => decide(true, [1, 1, 1], BIG, now);
  peek: RateLimiter['peek'] = async (_key, _limits, now) => decide(true, [0, 0, 0], BIG, now).windows;
  close = async () => {};
}

/**
 * The real app over a fresh SQLite file, with the plan in BENCH_PLAN (enterprise by default).
 * BENCH_LOG=1 keeps the per-request log line on (to /dev/null), as in production.
 * BENCH_PARTS=auth is issue 2's share: request id, bearer authentication, the route and the
 * envelope, with issue 3's rate limiting and usage recording left out (`limiter: null`,
 * `recordUsage: false`). BENCH_PARTS=admit-all: see AdmitAll.
 */
const dir = mkdtempSync(join(tmpdir(), 'netdiag-bench-'));
/**
 * BENCH_BACKEND=scale-out: PostgreSQL (BENCH_DATABASE_URL, a fresh schema dropped at the end) and
 * the Redis limiter (BENCH_REDIS_URL), the path several instances share; SQLite and the
 * in-process limiter otherwise.
 */
const scaleOut = process.env.BENCH_BACKEND === 'scale-out';
const pgUrl = process.env.BENCH_DATABASE_URL ?? 'postgres://postgres@127.0.0.1:5432/test';
const redisUrl = process.env.BENCH_REDIS_URL ?? 'redis://127.0.0.1:6379/15';
const schema = `nd_bench_${process.pid}_${Date.now()}`;
const config = loadConfig({
  ...process.env,
  DATABASE_URL: scaleOut ? pgUrl : `sqlite:${join(dir, 'bench.db')}`,
  ...(scaleOut ? { REDIS_URL: redisUrl } : {}),
  LOG_LEVEL: process.env.BENCH_LOG ? 'info' : 'silent',
});
const store = scaleOut ? await openPostgresStore(pgUrl, { schema }) : await openStore(config.databaseUrl);
const { token } = await new AccountService(store).createAccount({ email: 'bench@example.com', name: 'Bench', plan: process.env.BENCH_PLAN ?? 'enterprise' });
const parts = process.env.BENCH_PARTS ?? 'all';
if (parts === 'admit-all') store.usage.record = async () => {};
const app = await composeApp({
  config,
  store,
  limiter: parts === 'auth' ? null : parts === 'admit-all' ? new AdmitAll() : scaleOut ? new UnboundedRedis(new RedisRateLimiter(redisUrl)) : new UnboundedLimits(),
  recordUsage: parts !== 'auth',
  logger: process.env.BENCH_LOG ? { level: 'info' } : false,
});
await app.listen({ port: 0, host: '127.0.0.1' });
const address = app.server.address();
process.stdout.write(JSON.stringify({ url: `http://127.0.0.1:${typeof address === 'object' && address ? address.port : 0}`, token }) + '\n');
process.once('SIGTERM', () =>
  void app.close().then(async () => {
    await store.close();
    rmSync(dir, { recursive: true, force: true });
    if (scaleOut) {
      const client = new pg.Client({ connectionString: pgUrl });
      await client.connect();
      await client.query(`drop schema if exists "${schema}" cascade`);
      await client.end();
    }
    process.exit(0);
  }),
);
