import assert from 'node:assert/strict';
import { join } from 'node:path';
import { test, type TestContext } from 'node:test';
import { Webhook } from 'standardwebhooks';
import { composeApp } from '../../src/compose-app.js';
import { loadConfig } from '../../src/config.js';
import { AccountService } from '../../src/domain/accounts/service.js';
import { newJobId } from '../../src/domain/jobs/service.js';
import type { JobView } from '../../src/domain/jobs/types.js';
import { openSqliteStore } from '../../src/infra/store/sqlite.js';
import { createDialer } from '../../src/infra/net/dialer.js';
import { build, tempDir } from '../helpers/build.js';
import { connectSpy, startListener } from '../infra/net/fixtures/connect-spy.js';
import { startReceiver, type Receiver } from '../infra/webhooks/receiver.js';
import { eventually } from '../helpers/eventually.js';
import { checkResponses } from '../helpers/contract.js';

const LOOPBACK_ENV = { NETDIAG_ALLOW_TARGETS: '127.0.0.0/8,::1/128' };
/** Quick retries; a timeout far above any loopback answer, so a busy machine never makes an answer a failed attempt. */
const FAST = { retryDelaysMs: [40, 40, 40, 40, 40, 40, 40, 40, 40], timeoutMs: 30_000, pollMs: 20, leaseMs: 60_000 };

/** A webhook receiver answering `statusOf(n)` to its n-th delivery (from 0), closed when the test ends. */
async function hookReceiver(t: TestContext, statusOf: (n: number) => number = () => 200): Promise<Receiver> {
  const receiver = await startReceiver((_req, res, n) => {
    res.writeHead(statusOf(n));
    res.end();
  });
  t.after(() => receiver.close());
  return receiver;
}

/** That receiver, and a loopback listener for a job to scan. */
async function receiverAndTarget(t: TestContext, statusOf?: (n: number) => number): Promise<{ receiver: Receiver; target: Awaited<ReturnType<typeof startListener>> }> {
  const receiver = await hookReceiver(t, statusOf);
  const target = await startListener('127.0.0.1');
  t.after(() => target.close());
  return { receiver, target };
}

test('a job with a webhook_url: the receiver gets job.succeeded, signed, after 500 twice; GET /api/jobs/{id} shows the three attempts', async (t) => {
  const b = await build(t, { env: LOOPBACK_ENV, deps: { webhookTuning: FAST } });
  const { receiver, target } = await receiverAndTarget(t, (n) => (n < 2 ? 500 : 200));
  const res = await b.api('/api/port/scan', { json: { host: '127.0.0.1', port: target.port, webhook_url: `${receiver.url}/hook` }, headers: { prefer: 'respond-async' } });
  assert.equal(res.status, 202);
  const job = ((await res.json()) as { data: JobView }).data;
  await eventually(async () => receiver.received.length, (n) => n >= 3);
  assert.equal(receiver.received.length, 3);
  assert.equal(new Set(receiver.received.map((r) => r.headers['webhook-id'])).size, 1);
  const secret = ((await (await b.api('/api/webhooks/secret')).json()) as { data: { secret: string } }).data.secret;
  const event = new Webhook(secret).verify(receiver.received[2]!.body, receiver.received[2]!.headers as Record<string, string>) as { type: string; data: JobView };
  assert.equal(event.type, 'job.succeeded');
  assert.equal(event.data.id, job.id);
  const shown = await eventually(
    async () => ((await (await b.api(`/api/jobs/${job.id}`)).json()) as { data: JobView }).data,
    (j) => (j.webhook_deliveries?.length ?? 0) === 3,
    { intervalMs: 100 },
  );
  assert.deepEqual(shown.webhook_deliveries?.map((a) => [a.attempt, a.status]), [
    [1, 500],
    [2, 500],
    [3, 200],
  ]);
});

test('a job finished while its event could not be queued (the database failed just then) gets its webhook once, from the sweep', async (t) => {
  const b = await build(t, { env: LOOPBACK_ENV, deps: { webhookTuning: { ...FAST, sweepMs: 50, sweepGraceMs: 0 } } });
  const { receiver, target } = await receiverAndTarget(t);
  // Every enqueue fails until the job is over: its own (the only call finished() makes) included.
  const deliveries = b.store.webhookDeliveries;
  const enqueue = deliveries.enqueue.bind(deliveries);
  let refused = 0;
  let down = true;
  deliveries.enqueue = async (d) => {
    if (down) {
      refused++;
      throw new Error('database is down');
    }
    return enqueue(d);
  };
  const res = await b.api('/api/port/scan', { json: { host: '127.0.0.1', port: target.port, webhook_url: `${receiver.url}/hook` }, headers: { prefer: 'respond-async' } });
  assert.equal(res.status, 202);
  const id = ((await res.json()) as { data: JobView }).data.id;
  const view = async () => ((await (await b.api(`/api/jobs/${id}`)).json()) as { data: JobView }).data;
  assert.equal((await eventually(view, (j) => j.status === 'succeeded', { intervalMs: 100 })).status, 'succeeded');
  await eventually(async () => refused, (n) => n >= 1);
  assert.ok(refused >= 1);
  assert.equal(receiver.received.length, 0);

  // The sweeps after it, counted by their look-ups of jobs without an event.
  let sweeps = 0;
  const unqueued = deliveries.unqueued.bind(deliveries);
  deliveries.unqueued = async (...args) => {
    try {
      return await unqueued(...args);
    } finally {
      sweeps++;
    }
  };
  down = false;
  await eventually(async () => receiver.received.length, (n) => n >= 1);
  await eventually(async () => (await deliveries.attempts(id)).length === 1, { what: 'the attempt recorded' });
  const seen = sweeps;
  await eventually(() => sweeps >= seen + 2, { what: 'two more sweeps' });
  // Nothing pending at any time since (a claim far ahead sees every lease as lapsed): no more is sent.
  assert.deepEqual(await deliveries.claim('test-probe', Date.now() + 30 * 86_400_000, 1, 10), []);
  assert.equal(receiver.received.length, 1, 'one event, however many sweeps ran');
  const secret = ((await (await b.api('/api/webhooks/secret')).json()) as { data: { secret: string } }).data.secret;
  const event = new Webhook(secret).verify(receiver.received[0]!.body, receiver.received[0]!.headers as Record<string, string>);
  const { webhook_deliveries: _attempts, ...shown } = await view();
  assert.deepEqual(event, { type: 'job.succeeded', timestamp: shown.finished_at, data: shown }, 'what finished() would have sent');
});

test('a webhook_url in a forbidden range is a 403 at job creation, and nothing connects to it', async (t) => {
  const spy = connectSpy();
  // Probes may reach 127.0.0.0/8 here; the webhook URLs below are outside it.
  const dialer = createDialer({ allowTargets: ['127.0.0.0/8'], dnsServers: [{ host: '127.0.0.1', port: 1 }] }, { connectFn: spy.fn });
  const b = await build(t, { deps: { dialer } });
  for (const [url, address] of [
    ['http://10.0.0.1/hook', '10.0.0.1'],
    ['http://[::1]:9/hook', '::1'],
    ['https://169.254.169.254/latest', '169.254.169.254'],
  ] as const) {
    const res = await b.api('/api/port/scan', { json: { host: '127.0.0.1', port: 9, webhook_url: url }, headers: { prefer: 'respond-async' } });
    assert.equal(res.status, 403, url);
    const body = (await res.json()) as { error: string; details: { address: string } };
    assert.equal(body.error, 'target_forbidden');
    assert.equal(body.details.address, address);
  }
  assert.deepEqual(spy.calls, []);
});

test("an event the sweep queues at start shows the job as the API does: a bulk job cancelled before its first item has result [], not null", async (t) => {
  const receiver = await hookReceiver(t);
  const store = await openSqliteStore(join(tempDir(t), 'netdiag.db'));
  const { account, token } = await new AccountService(store).createAccount({ email: 'a@example.com', name: 'A', plan: 'pro' });
  // Left by a process that died before queuing its event: cancelled a minute ago, no items, no delivery.
  const at = new Date(Date.now() - 60_000).toISOString();
  const id = newJobId();
  await store.jobs.create({ id, account_id: account.id, endpoint: '/port/scan-range', body: '{"host":"127.0.0.1","ports":"1-2"}', webhook_url: `${receiver.url}/hook`, progress_total: 2, created_at: at });
  assert.ok(await store.jobs.cancel(id, account.id, at));
  const config = loadConfig({ DATABASE_URL: 'sqlite::memory:', NETDIAG_DNS_SERVERS: '127.0.0.1:1', ...LOOPBACK_ENV });
  const app = await composeApp({ config, store, logger: false, webhookTuning: { ...FAST, sweepGraceMs: 0 } });
  checkResponses(t, app);
  t.after(async () => {
    await app.close();
    await store.close();
  });
  await app.ready();
  await eventually(async () => receiver.received.length, (n) => n >= 1);
  const secret = ((await app.inject({ url: '/api/webhooks/secret', headers: { authorization: `Bearer ${token}` } })).json() as { data: { secret: string } }).data.secret;
  const event = new Webhook(secret).verify(receiver.received[0]!.body, receiver.received[0]!.headers as Record<string, string>) as { type: string; data: JobView };
  assert.equal(event.type, 'job.cancelled');
  const shown = (await app.inject({ url: `/api/jobs/${id}`, headers: { authorization: `Bearer ${token}` } })).json() as { data: JobView };
  const { webhook_deliveries: _attempts, ...view } = shown.data;
  assert.deepEqual(event.data, view);
  assert.deepEqual(event.data.result, []);
});

test("POST /api/jobs/{id}/deliveries sends a finished job's event again, same webhook-id, as no call; 409 without a webhook_url, 404 for another's job", async (t) => {
  const b = await build(t, { env: LOOPBACK_ENV, deps: { webhookTuning: FAST } });
  const { receiver, target } = await receiverAndTarget(t);
  const created = await b.api('/api/port/scan', { json: { host: '127.0.0.1', port: target.port, webhook_url: `${receiver.url}/hook` }, headers: { prefer: 'respond-async' } });
  const job = ((await created.json()) as { data: JobView }).data;
  await eventually(async () => receiver.received.length, (n) => n >= 1);
  const secret = ((await (await b.api('/api/webhooks/secret')).json()) as { data: { secret: string } }).data.secret;
  const used = async () => ((await (await b.api('/api/user')).json()) as { data: { api_calls_used: number } }).data.api_calls_used;
  const before = await used();

  const again = await b.api(`/api/jobs/${job.id}/deliveries`, { method: 'POST' });
  assert.equal(again.status, 200);
  assert.equal(((await again.json()) as { data: JobView }).data.id, job.id);
  await eventually(async () => receiver.received.length, (n) => n >= 2);
  assert.equal(receiver.received[1]!.headers['webhook-id'], receiver.received[0]!.headers['webhook-id']);
  assert.equal(receiver.received[1]!.body, receiver.received[0]!.body);
  const event = new Webhook(secret).verify(receiver.received[1]!.body, receiver.received[1]!.headers as Record<string, string>) as { type: string; data: JobView };
  assert.equal(event.type, 'job.succeeded');
  // Neither the redelivery nor the reads of /api/user spent a call beyond those reads.
  assert.equal(await used(), before + 1);

  const plain = await b.api('/api/port/scan', { json: { host: '127.0.0.1', port: target.port }, headers: { prefer: 'respond-async' } });
  const plainJob = ((await plain.json()) as { data: JobView }).data;
  await eventually(async () => ((await (await b.api(`/api/jobs/${plainJob.id}`)).json()) as { data: JobView }).data.status, (s) => s === 'succeeded', { intervalMs: 50 });
  const conflict = await b.api(`/api/jobs/${plainJob.id}/deliveries`, { method: 'POST' });
  assert.equal(conflict.status, 409);
  assert.match(((await conflict.json()) as { message: string }).message, /webhook_url/);

  const { token: other } = await b.accounts.createAccount({ email: 'other@example.com', name: 'Other', plan: 'pro' });
  const foreign = await b.api(`/api/jobs/${job.id}/deliveries`, { method: 'POST', token: other });
  assert.equal(foreign.status, 404);
  assert.equal(receiver.received.length, 2);
});
