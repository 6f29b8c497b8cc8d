import assert from 'node:assert/strict';
import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import net from 'node:net';
import { fileURLToPath } from 'node:url';
import { test } from 'node:test';
import { Webhook } from 'standardwebhooks';
import { composeApp } from '../src/compose-app.js';
import { loadConfig } from '../src/config.js';
import { AccountService } from '../src/domain/accounts/service.js';
import type { JobView } from '../src/domain/jobs/types.js';
import { silentPorts } from './fixtures/silent-ports.js';
import { freePort } from './helpers/free-port.js';
import { schemaDatabaseUrl } from './helpers/pg-schema.js';
import { hasRedisServer, startRedisServer } from './helpers/redis-server.js';
import { TEST_DATABASE_URL, postgresBackend } from './infra/store/backends.js';
import { startReceiver } from './infra/webhooks/receiver.js';
import { eventually } from './helpers/eventually.js';

// own process: workers it starts and kills, a minute of waiting (scripts/test-tree.mjs).

/**
 * Issue 18: two `netdiag worker` processes on one PostgreSQL and one Redis (a redis-server of
 * this test's own, so no other test's queue is ever seen), an API instance with
 * NETDIAG_WORKERS=0. The worker running a job is killed with SIGKILL mid-job; the other takes it
 * over once BullMQ's stalled check and the database lease agree, and the webhook goes out once.
 */

const BIN = fileURLToPath(new URL('../bin/netdiag.js', import.meta.url));

/** Connects from this machine to `ports` still waiting for an answer to their SYN (ss, iproute2). */
function synSentTo(ports: readonly number[]): number {
  const out = spawnSync('ss', ['-Htan', 'state', 'syn-sent'], { encoding: 'utf8' }).stdout;
  const wanted = new Set(ports);
  return out.split('\n').filter((line) => wanted.has(Number(/:(\d+)\s*$/.exec(line)?.[1]))).length;
}

function skipReason(): string | false {
  if (!TEST_DATABASE_URL) return 'set TEST_DATABASE_URL (PostgreSQL): workers share a database';
  if (!hasRedisServer) return 'needs redis-server (the test starts one of its own)';
  if (spawnSync('sh', ['-c', 'command -v python3']).status !== 0) return 'needs python3 (listeners that never accept: SYN-dropping ports on loopback)';
  if (spawnSync('sh', ['-c', 'command -v ss']).status !== 0) return "needs ss (iproute2): the scan's connects are seen waiting";
  return false;
}

function startWorker(env: Record<string, string>): { child: ChildProcess; ready: Promise<string> } {
  const child = spawn(process.execPath, [BIN, 'worker'], { env: { ...process.env, ...env }, stdio: ['ignore', 'ignore', 'pipe'] });
  let err = '';
  const ready = new Promise<string>((resolve, reject) => {
    child.stderr!.setEncoding('utf8').on('data', (d: string) => {
      err += d;
      const line = err.split('\n').find((l) => l.startsWith('netdiag worker:'));
      if (line) resolve(line);
    });
    child.once('exit', (code) => reject(new Error(`worker exited ${code}: ${err}`)));
  });
  ready.catch(() => undefined);
  return { child, ready };
}

test('SIGKILL of the worker running a job: the other worker finishes it, same result shape, the webhook is delivered once', { skip: skipReason(), timeout: 90_000 }, async (t) => {
  const dbUrl = TEST_DATABASE_URL!;
  const redisPort = await freePort();
  await startRedisServer(t, redisPort);
  const redisUrl = `redis://127.0.0.1:${redisPort}/0`;

  const backend = postgresBackend(dbUrl);
  const store = await backend.open();
  t.after(async () => {
    await store.close();
    await backend.drop();
  });
  const { token } = await new AccountService(store).createAccount({ email: 'w@example.com', name: 'W', plan: 'enterprise' });
  const silent = await silentPorts(10);
  t.after(() => silent.close());
  const receiver = await startReceiver((_req, res) => {
    res.writeHead(200);
    res.end();
  });
  t.after(() => receiver.close());

  const shared = { REDIS_URL: redisUrl, NETDIAG_ALLOW_TARGETS: '127.0.0.0/8', NETDIAG_DNS_SERVERS: '127.0.0.1:1' };
  const sep = dbUrl.includes('?') ? '&' : '?';
  const workerEnv = { ...shared, DATABASE_URL: `${dbUrl}${sep}options=${encodeURIComponent(`-c search_path=${backend.schema}`)}`, NETDIAG_WORKERS: '2', LOG_LEVEL: 'warn', LOG_FORMAT: 'json' };
  const workers = [startWorker(workerEnv), startWorker(workerEnv)];
  t.after(async () => {
    for (const w of workers) if (w.child.exitCode === null && w.child.signalCode === null) w.child.kill('SIGKILL');
  });

  const app = await composeApp({ config: loadConfig({ ...shared, DATABASE_URL: 'sqlite::memory:', NETDIAG_WORKERS: '0' }), store, logger: false });
  t.after(() => app.close());
  await app.listen({ port: 0, host: '127.0.0.1' });
  const base = `http://127.0.0.1:${(app.server.address() as net.AddressInfo).port}`;
  const api = (path: string, json?: unknown, headers: Record<string, string> = {}) =>
    fetch(base + path, {
      method: json === undefined ? 'GET' : 'POST',
      headers: { authorization: `Bearer ${token}`, ...(json === undefined ? {} : { 'content-type': 'application/json' }), ...headers },
      ...(json === undefined ? {} : { body: JSON.stringify(json) }),
    });
  for (const line of await Promise.all(workers.map((w) => w.ready))) assert.match(line, new RegExp(`database .*${backend.schema}.*BullMQ on redis://127\\.0\\.0\\.1:${redisPort}`));

  const body = { host: '127.0.0.1', ports: silent.ports, timeout: 3 };
  const created = await api('/api/port/scan-range', { ...body, webhook_url: `${receiver.url}/hook` }, { prefer: 'respond-async' });
  assert.equal(created.status, 202);
  const job = ((await created.json()) as { data: JobView }).data;

  // The worker that claimed it, by the pid in its lease; killed while its scan waits for answers.
  const running = await eventually(() => store.jobs.find(job.id), (r) => r?.status === 'running' && r.lease_owner !== null, { timeoutMs: 15_000, intervalMs: 100, what: 'the job to run' });
  const pid = Number(running!.lease_owner!.split(':')[1]);
  const victim = workers.find((w) => w.child.pid === pid);
  assert.ok(victim, `lease owner ${running!.lease_owner} is one of the workers`);
  // Killed once its scan's connects are out, waiting for answers that never come.
  await eventually(() => synSentTo(silent.ports) > 0, { timeoutMs: 15_000, intervalMs: 50, what: "the scan's connects under way" });
  victim.child.kill('SIGKILL');
  await new Promise((r) => victim.child.once('exit', r));
  assert.equal((await store.jobs.find(job.id))?.status, 'running', 'killed mid-job');

  const done = await eventually(() => store.jobs.find(job.id), (r) => r?.status !== 'running' && r?.status !== 'queued', { timeoutMs: 50_000, intervalMs: 100, what: 'another worker to finish the job' });
  assert.equal(done!.status, 'succeeded');
  assert.equal(done!.attempts, 2);
  const survivor = workers.find((w) => w !== victim)!;
  assert.equal(survivor.child.exitCode, null, 'the other worker still runs');

  const view = ((await (await api(`/api/jobs/${job.id}`)).json()) as { data: JobView }).data;
  const sync = ((await (await api('/api/port/scan-range', body)).json()) as { data: unknown[] }).data;
  const untimed = (items: unknown) => (items as Array<Record<string, unknown>>).map(({ response_time: _r, queued_ms: _q, ...rest }) => rest);
  assert.deepEqual(untimed(view.result), untimed(sync));
  assert.ok((view.result as Array<{ state: string }>).every((i) => i.state === 'filtered'));

  await eventually(() => receiver.received.length, (n) => n >= 1, { timeoutMs: 10_000, intervalMs: 100, what: 'the webhook' });
  // Its attempt recorded, and nothing pending at any time since (a claim far ahead sees every lease as lapsed): no more is sent.
  await eventually(async () => (await store.webhookDeliveries.attempts(job.id)).length, (n) => n >= 1, { timeoutMs: 10_000, intervalMs: 100, what: 'the attempt recorded' });
  assert.deepEqual(await store.webhookDeliveries.claim('test-probe', Date.now() + 30 * 86_400_000, 1, 10), [], 'no delivery pending');
  assert.equal(new Set(receiver.received.map((r) => r.headers['webhook-id'])).size, 1, 'one webhook-id');
  assert.equal(receiver.received.length, 1, 'delivered once');
  const secret = ((await (await api('/api/webhooks/secret')).json()) as { data: { secret: string } }).data.secret;
  const event = new Webhook(secret).verify(receiver.received[0]!.body, receiver.received[0]!.headers as Record<string, string>) as { type: string; data: JobView };
  assert.equal(event.type, 'job.succeeded');
  assert.equal(event.data.id, job.id);

  // SIGTERM: the survivor stops cleanly.
  survivor.child.kill('SIGTERM');
  const code = await new Promise((r) => survivor.child.once('exit', r));
  assert.equal(code, 0);
});

test('SIGTERM while Redis is down: the worker stops within its close bounds and exits 0', { skip: skipReason(), timeout: 60_000 }, async (t) => {
  // BullMQ waits for its blocking connection to end, which ioredis never says while it waits to
  // reconnect: the worker held its shutdown until the grace ran out and exited 1.
  const redisPort = await freePort();
  const redis = await startRedisServer(t, redisPort);
  const worker = startWorker({
    REDIS_URL: `redis://127.0.0.1:${redisPort}/0`,
    DATABASE_URL: await schemaDatabaseUrl(t, TEST_DATABASE_URL!, 'worker_sigterm'),
    NETDIAG_WORKERS: '2',
    NETDIAG_DNS_SERVERS: '127.0.0.1:1',
    NETDIAG_SHUTDOWN_GRACE_S: '30',
    LOG_LEVEL: 'warn',
  });
  t.after(() => void worker.child.kill('SIGKILL'));
  await worker.ready;
  redis.kill('SIGKILL');
  await new Promise((r) => redis.once('exit', r));
  worker.child.kill('SIGTERM');
  const code = await new Promise((r) => worker.child.once('exit', r));
  assert.equal(code, 0, 'stopped by itself, not by the shutdown grace');
});
