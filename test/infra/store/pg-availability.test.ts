import assert from 'node:assert/strict';
import { createServer } from 'node:net';
import { test } from 'node:test';
import { CircuitBreaker, PG_BREAKER_OPEN_MS, guardedPool, isDatabaseUnreachable } from '../../../src/infra/store/pg-availability.js';
import { DatabaseUnavailableError } from '../../../src/errors.js';

test('pg availability: connection failures and shutdown codes are "unreachable"; a wrong query is not', () => {
  const withCode = (message: string, code: string) => Object.assign(new Error(message), { code });
  assert.ok(isDatabaseUnreachable(withCode('connect ECONNREFUSED 127.0.0.1:5432', 'ECONNREFUSED')));
  assert.ok(isDatabaseUnreachable(withCode('terminating connection due to administrator command', '57P01')));
  assert.ok(isDatabaseUnreachable(withCode('the database system is shutting down', '57P03')));
  assert.ok(isDatabaseUnreachable(withCode('connection failure', '08006')));
  assert.ok(isDatabaseUnreachable(new Error('Connection terminated unexpectedly')));
  assert.ok(isDatabaseUnreachable(new Error('timeout exceeded when trying to connect')));
  assert.ok(isDatabaseUnreachable(new DatabaseUnavailableError()));
  assert.ok(isDatabaseUnreachable(new Error('query failed', { cause: withCode('read ECONNRESET', 'ECONNRESET') })));
  assert.ok(!isDatabaseUnreachable(withCode('syntax error at or near "selec"', '42601')));
  assert.ok(!isDatabaseUnreachable(withCode('duplicate key value violates unique constraint', '23505')));
  assert.ok(!isDatabaseUnreachable('ECONNREFUSED'));
});

test('pg availability: after a failed connect the pool fails fast without trying, then lets one probe through', async (t) => {
  // A "server" that accepts and hangs up at once: every attempt is seen, and every one fails.
  let attempts = 0;
  const server = createServer((socket) => {
    attempts++;
    socket.destroy();
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  t.after(() => new Promise<void>((resolve) => server.close(() => resolve())));
  const port = (server.address() as { port: number }).port;

  let now = 1_000_000;
  const changes: boolean[] = [];
  const breaker = new CircuitBreaker(PG_BREAKER_OPEN_MS, () => now);
  breaker.onChange = (up) => changes.push(up);
  const { pool, raw } = guardedPool({ connectionString: `postgres://nobody@127.0.0.1:${port}/none`, max: 2 }, breaker);
  t.after(() => raw.end());

  await assert.rejects(pool.connect(), (err) => err instanceof DatabaseUnavailableError && isDatabaseUnreachable(err.cause));
  assert.equal(attempts, 1);
  assert.equal(breaker.available, false);
  for (let i = 0; i < 5; i++) await assert.rejects(pool.connect(), DatabaseUnavailableError);
  assert.equal(attempts, 1, 'no attempt while the breaker is open');

  now += PG_BREAKER_OPEN_MS;
  const probe = pool.connect();
  // While the probe is out, everyone else still fails fast.
  await assert.rejects(pool.connect(), DatabaseUnavailableError);
  await assert.rejects(probe, (err) => err instanceof DatabaseUnavailableError && isDatabaseUnreachable(err.cause));
  assert.equal(attempts, 2, 'exactly one probe');
  await assert.rejects(pool.connect(), DatabaseUnavailableError);
  assert.deepEqual(changes, [false], 'told once that it went down, not per failure');
});
