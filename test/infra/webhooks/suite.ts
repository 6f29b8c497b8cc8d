import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { test, type TestContext } from 'node:test';
import { Webhook } from 'standardwebhooks';
import { PACKAGE_DIR } from '../../../src/config.js';
import { AccountService } from '../../../src/domain/accounts/service.js';
import type { JobView } from '../../../src/domain/jobs/types.js';
import { batchOf } from '../../../src/domain/jobs/items.js';
import { rowView, WebhookDelivery } from '../../../src/domain/webhooks/delivery.js';
import { WebhookSecrets } from '../../../src/domain/webhooks/secrets.js';
import { TargetForbiddenError, ValidationError } from '../../../src/errors.js';
import { createDialer } from '../../../src/infra/net/dialer.js';
import type { Store } from '../../../src/domain/store.js';
import { createWebhooks, DialerWebhookTransport, type Webhooks, type WebhookTuning } from '../../../src/infra/webhooks/index.js';
import { WEBHOOK_SWEEP_PAGE } from '../../../src/infra/webhooks/queue.js';
import { connectSpy, type ConnectSpy } from '../net/fixtures/connect-spy.js';
import { startDnsServer } from '../net/fixtures/dns-server.js';
import type { Backend } from '../store/backends.js';
import { startReceiver, status, type Answer, type Receiver } from './receiver.js';
import { eventually } from '../../helpers/eventually.js';

/**
 * The schedule in milliseconds: the real one's shape (nine retries), a test's patience. The
 * timeout is far above any answer of a loopback receiver, however busy the machine: an answer
 * that came late must not turn into a failed attempt and a retry. Tests of the timeout set theirs.
 */
const FAST: WebhookTuning = { retryDelaysMs: [40, 40, 40, 40, 40, 40, 40, 40, 40], timeoutMs: 30_000, pollMs: 20, leaseMs: 60_000 };
const LOOPBACK = ['127.0.0.0/8', '::1/128'];
const NO_DNS = [{ host: '127.0.0.1', port: 1 }];

let jobs = 0;
export function finishedJob(webhookUrl: string | null, status: JobView['status'] = 'succeeded'): JobView {
  jobs++;
  return {
    id: `job_${process.pid}_${jobs}`,
    endpoint: '/port/scan',
    status,
    progress: { done: 1, total: 1 },
    created_at: '2026-11-23T06:00:00.000Z',
    started_at: '2026-11-23T06:00:00.100Z',
    finished_at: '2026-11-23T06:00:01.000Z',
    result: { host: '192.0.2.1', port: 80, open: false },
    error: null,
    webhook_url: webhookUrl,
  };
}

const MINUTE = 60_000;
/** Past the longest wait the schedule or a Retry-After can set (24 h): a claim this far ahead finds every pending delivery. */
const BEYOND_EVERY_RETRY_MS = 30 * 86_400_000;

/**
 * A job row as the job engine leaves it, without its event: created, run and finished (or
 * cancelled) `agoMs` ago, with `items` completed first when given. Its id.
 */
export async function finishedRow(
  store: Store,
  accountId: number,
  opts: { url: string | null; status?: 'succeeded' | 'failed' | 'cancelled' | 'running'; agoMs?: number; items?: unknown[] },
): Promise<string> {
  jobs++;
  const id = `job_${process.pid}_${jobs}`;
  const at = new Date(Date.now() - (opts.agoMs ?? 5 * MINUTE)).toISOString();
  const items = opts.items ?? [];
  await store.jobs.create({ id, account_id: accountId, endpoint: '/port/scan', body: '{"host":"192.0.2.1","port":80}', webhook_url: opts.url, progress_total: Math.max(1, items.length), created_at: at });
  assert.ok(await store.jobs.claim(id, 'engine', Date.parse(at), Date.parse(at) + MINUTE, at));
  // Completed in reverse: the view orders them by index.
  const done = items.map((item, index) => ({ seq: items.length - index, index, item: JSON.stringify(item) })).reverse();
  if (done.length > 0) assert.ok(await store.jobs.addItems(id, 'engine', batchOf(done), done.length));
  const status = opts.status ?? 'succeeded';
  if (status === 'cancelled') assert.ok(await store.jobs.cancel(id, accountId, at));
  else if (status !== 'running') {
    const ok = status === 'succeeded';
    assert.ok(await store.jobs.finish(id, 'engine', { status, result: ok ? JSON.stringify({ open: false }) : null, error: ok ? null : JSON.stringify({ success: false, error: 'timeout', message: 'too slow' }), finished_at: at, progress_done: done.length }));
  }
  return id;
}

/** The event each job got, by job id: its type and data. */
function eventsOf(r: Receiver): Map<string, Array<{ type: string; timestamp: string; data: JobView }>> {
  const byJob = new Map<string, Array<{ type: string; timestamp: string; data: JobView }>>();
  for (const x of r.received) {
    const event = JSON.parse(x.body) as { type: string; timestamp: string; data: JobView };
    byJob.set(event.data.id, [...(byJob.get(event.data.id) ?? []), event]);
  }
  return byJob;
}

interface Setup {
  store: Store;
  accountId: number;
  secrets: WebhookSecrets;
  spy: ConnectSpy;
  delivery: WebhookDelivery;
  receiver(answer: Answer, tls?: boolean): Promise<Receiver>;
  /**
   * Runs `close` when the test ends, before the receivers, the store and its database go (a
   * `t.after` of the test runs after setup's: a queue still polling a dropped PostgreSQL schema
   * deadlocked the drop). The last one given runs first.
   */
  atEnd(close: () => unknown): void;
  /** The started queue (none with `start: false`). */
  watched?: Watched;
}

/**
 * A job's event sent to `r` (under a 300 ms timeout, no retries): its one attempt got no answer
 * and was cut then. Not after: a receiver that never answers (or trickles forever) would
 * otherwise never end the attempt, and `eventually` gives up.
 */
async function assertCutAtTimeout(s: Setup, r: Receiver): Promise<void> {
  const job = finishedJob(r.url);
  await s.delivery.finished(job, s.accountId);
  const [a] = await eventually(() => s.delivery.attemptsOf(job.id), (x) => x.length === 1);
  assert.equal(a!.status, null);
  assert.equal(a!.error, 'no answer within 300 ms');
  assert.ok(a!.duration_ms >= 290, String(a!.duration_ms));
}

interface Clocked {
  /** The webhooks' clock: the schedule's and the claims' time, epoch ms; moved only by the test. */
  now: number;
  delivery: WebhookDelivery;
  /** Moves the clock to `at`, then waits for two looks of the queue at it (the first may have begun before). */
  moveTo(at: number): Promise<void>;
}

/**
 * Webhooks on a clock the test moves (`tuning` over the real schedule, timeout and lease; a fast
 * poll), started on `s`'s store with its looks counted: a retry falls due when the test moves the
 * clock, and "not yet" is proven by looks that found nothing, never by a wall-clock wait.
 */
function clocked(s: Setup, tuning: WebhookTuning = {}): Clocked {
  // A whole second: an HTTP-date has no finer grain.
  const c = { now: Math.ceil(Date.now() / 1_000) * 1_000 } as Clocked;
  let looks = 0;
  const deliveries = s.store.webhookDeliveries;
  const store: Store = Object.assign(Object.create(s.store) as Store, {
    webhookDeliveries: {
      ...deliveries,
      claim: async (...args: Parameters<typeof deliveries.claim>) => {
        try {
          return await deliveries.claim(...args);
        } finally {
          looks++;
        }
      },
    },
  });
  const clock = () => new Date(c.now);
  const w = createWebhooks({ store, dialer: createDialer({ allowTargets: LOOPBACK, dnsServers: NO_DNS }), secrets: new WebhookSecrets(s.store, clock), clock, tuning: { pollMs: 20, ...tuning } });
  s.atEnd(() => w.queue.close());
  c.delivery = w.delivery;
  c.moveTo = async (at) => {
    c.now = at;
    const seen = looks;
    await eventually(async () => looks, (n) => n >= seen + 2, { what: 'two looks of the queue' });
  };
  return c;
}

/** The moments (epoch ms of the test's clock) at which a job's attempts were made. */
async function attemptTimes(d: WebhookDelivery, jobId: string, count: number): Promise<number[]> {
  const attempts = await eventually(() => d.attemptsOf(jobId), (a) => a.length === count, { what: `${count} attempts` });
  return attempts.map((a) => Date.parse(a.at));
}

/** A webhook queue, and the looks it has made (the claims of its store). */
export interface Watched {
  queue: { readonly active: number };
  looks(): number;
}

/**
 * `store` with its webhook claims counted: each is one look of the queue working from it. The
 * repository's methods are looked up at each call, so a test may still replace one of them.
 */
function countLooks(store: Store): { store: Store; looks: () => number } {
  let looks = 0;
  const deliveries = store.webhookDeliveries;
  const counted: Store = Object.assign(Object.create(store) as Store, {
    webhookDeliveries: Object.assign(Object.create(deliveries) as typeof deliveries, {
      claim: async (...args: Parameters<typeof deliveries.claim>) => {
        try {
          return await deliveries.claim(...args);
        } finally {
          looks++;
        }
      },
    }),
  });
  return { store: counted, looks: () => looks };
}

/** Webhooks started on `store`, their looks counted. */
export function watchedWebhooks(opts: Parameters<typeof createWebhooks>[0]): Webhooks & Watched {
  const { store, looks } = countLooks(opts.store);
  const w = createWebhooks({ ...opts, store });
  return { ...w, looks };
}

/**
 * Nothing more will be sent, proven by the queues rather than by a wait: each queue has looked
 * twice (the first look may have begun before) with no attempt under way, so what was due has
 * been sent and recorded; and then no delivery is pending, due at any time a retry could be set.
 * The last is a claim so far ahead that every lease looks lapsed to it: it finds pending
 * deliveries whether or not a queue holds them (so it comes last: it takes what it finds).
 */
export async function nothingMore(store: Store, ...queues: Watched[]): Promise<void> {
  const seen = queues.map((q) => q.looks());
  await eventually(() => queues.every((q, i) => q.looks() >= seen[i]! + 2 && q.queue.active === 0), { what: 'two looks of each queue, no attempt under way' });
  const pending = await store.webhookDeliveries.claim('test-probe', Date.now() + BEYOND_EVERY_RETRY_MS, 1, 1_000);
  assert.deepEqual(pending.map((d) => [d.job_id, d.attempt]), [], 'no delivery is pending');
}

/** A store of the backend, an account, a dialer (loopback allowed unless `allow: false`) with a spy, and started webhooks. */
async function setup(t: TestContext, backend: () => Backend, opts: { allow?: boolean; tuning?: WebhookTuning; start?: boolean } = {}): Promise<Setup & { b: Backend }> {
  const b = backend();
  const store = await b.open();
  const { account } = await new AccountService(store).createAccount({ email: `hook${jobs}@example.com`, name: 'Hook' });
  const spy = connectSpy();
  const dialer = createDialer({ allowTargets: opts.allow === false ? [] : LOOPBACK, dnsServers: NO_DNS }, { connectFn: spy.fn });
  const secrets = new WebhookSecrets(store);
  const receivers: Receiver[] = [];
  const closers: Array<() => unknown> = [];
  t.after(async () => {
    for (const close of closers.reverse()) await close();
    for (const r of receivers) await r.close();
    await store.close();
    await b.drop();
  });
  const tuning = { ...FAST, ca: readFileSync(join(PACKAGE_DIR, 'test/fixtures/tls/cert.pem')), ...opts.tuning };
  let delivery: WebhookDelivery;
  let watched: Watched | undefined;
  if (opts.start === false) {
    delivery = new WebhookDelivery({ store, secrets, transport: new DialerWebhookTransport(dialer), ...tuning });
  } else {
    const w = watchedWebhooks({ store, dialer, secrets, tuning });
    closers.push(() => w.queue.close());
    delivery = w.delivery;
    watched = w;
  }
  return {
    b,
    store,
    accountId: account.id,
    secrets,
    spy,
    delivery,
    async receiver(answer, tls = false) {
      const dir = join(PACKAGE_DIR, 'test/fixtures/tls');
      const r = await startReceiver(answer, tls ? { key: readFileSync(join(dir, 'key.pem')), cert: readFileSync(join(dir, 'cert.pem')) } : undefined);
      receivers.push(r);
      return r;
    },
    atEnd: (close) => void closers.push(close),
    ...(watched ? { watched } : {}),
  };
}

/** The webhook delivery contract (issue 18), run against every store backend. */
export function webhookDeliverySuite(name: string, backend: () => Backend): void {
  test(`${name}: a finished job's event is POSTed once, signed so that the standardwebhooks package verifies it`, async (t) => {
    const s = await setup(t, backend);
    const r = await s.receiver(status(204));
    const job = finishedJob(`${r.url}/hooks/netdiag?x=1`);
    const sentFrom = Math.floor(Date.now() / 1000);
    await s.delivery.finished(job, s.accountId);
    const attempts = await eventually(() => s.delivery.attemptsOf(job.id), (a) => a.length === 1);
    const sentBy = Math.ceil(Date.now() / 1000);
    assert.equal(attempts.length, 1);
    assert.equal(attempts[0]!.attempt, 1);
    assert.equal(attempts[0]!.status, 204);
    assert.equal(attempts[0]!.error, null);
    assert.ok(attempts[0]!.duration_ms >= 0);
    assert.ok(!Number.isNaN(Date.parse(attempts[0]!.at)));

    assert.equal(r.received.length, 1);
    const got = r.received[0]!;
    assert.equal(got.method, 'POST');
    assert.equal(got.url, '/hooks/netdiag?x=1');
    assert.equal(got.headers['content-type'], 'application/json');
    assert.match(String(got.headers['webhook-id']), /^msg_/);
    const secret = await s.secrets.get(s.accountId);
    const payload = new Webhook(secret.secret).verify(got.body, got.headers as Record<string, string>);
    assert.deepEqual(payload, { type: 'job.succeeded', timestamp: job.finished_at, data: job });
    // Signed when sent, not at the job's end (days before): the receiver's replay window holds.
    const signedAt = Number(got.headers['webhook-timestamp']);
    assert.ok(signedAt >= sentFrom && signedAt <= sentBy, `signed at ${signedAt}, sent within ${sentFrom}-${sentBy}`);
  });

  test(`${name}: failed and cancelled jobs send job.failed and job.cancelled; a job without a URL or finishing twice sends nothing more`, async (t) => {
    const s = await setup(t, backend);
    const r = await s.receiver(status(200));
    const failed = finishedJob(r.url, 'failed');
    const cancelled = finishedJob(r.url, 'cancelled');
    await s.delivery.finished(failed, s.accountId);
    await s.delivery.finished(cancelled, s.accountId);
    await s.delivery.finished(failed, s.accountId);
    await s.delivery.finished(finishedJob(null), s.accountId);
    assert.equal(await s.delivery.enqueue({ ...finishedJob(r.url), status: 'running' }, s.accountId), false);
    await eventually(async () => r.received.length, (n) => n >= 2);
    await eventually(async () => (await s.delivery.attemptsOf(failed.id)).length + (await s.delivery.attemptsOf(cancelled.id)).length === 2);
    await nothingMore(s.store, s.watched!);
    assert.deepEqual(r.received.map((x) => (JSON.parse(x.body) as { type: string }).type).sort(), ['job.cancelled', 'job.failed']);
  });

  test(`${name}: 500, 500, then 200 is three attempts with one webhook-id, each recorded`, async (t) => {
    const s = await setup(t, backend);
    const r = await s.receiver((_req, res, n) => {
      res.writeHead(n < 2 ? 500 : 200);
      res.end();
    });
    const job = finishedJob(r.url);
    await s.delivery.finished(job, s.accountId);
    const attempts = await eventually(() => s.delivery.attemptsOf(job.id), (a) => a.length === 3);
    assert.deepEqual(
      attempts.map((a) => [a.attempt, a.status, a.error]),
      [
        [1, 500, 'HTTP 500'],
        [2, 500, 'HTTP 500'],
        [3, 200, null],
      ],
    );
    assert.equal(r.received.length, 3);
    assert.equal(new Set(r.received.map((x) => x.headers['webhook-id'])).size, 1);
    // Every retry is the same event, signed afresh.
    assert.equal(new Set(r.received.map((x) => x.body)).size, 1);
    const secret = (await s.secrets.get(s.accountId)).secret;
    for (const x of r.received) assert.ok(new Webhook(secret).verify(x.body, x.headers as Record<string, string>));
    // The retries waited the schedule's delay.
    assert.ok(r.received[1]!.at - r.received[0]!.at >= 35);
    await nothingMore(s.store, s.watched!);
    assert.equal(r.received.length, 3, 'nothing after the 2xx');
  });

  test(`${name}: after the schedule's last retry the event is given up`, async (t) => {
    const s = await setup(t, backend, { tuning: { retryDelaysMs: [20, 20] } });
    const r = await s.receiver(status(503));
    const job = finishedJob(r.url);
    await s.delivery.finished(job, s.accountId);
    await eventually(() => s.delivery.attemptsOf(job.id), (a) => a.length === 3);
    await nothingMore(s.store, s.watched!);
    assert.equal(r.received.length, 3);
    assert.deepEqual((await s.delivery.attemptsOf(job.id)).map((a) => a.status), [503, 503, 503]);
  });

  test(`${name}: a 429 with Retry-After: 30 is retried no sooner than 30 s later (not after the schedule's 5 s), same webhook-id, verified by standardwebhooks`, async (t) => {
    const s = await setup(t, backend, { start: false });
    const r = await s.receiver((_req, res, n) => {
      res.writeHead(n === 0 ? 429 : 200, n === 0 ? { 'retry-after': '30' } : {});
      res.end();
    });
    const c = clocked(s);
    const t0 = c.now;
    const job = finishedJob(r.url);
    await c.delivery.finished(job, s.accountId);
    const [first] = await eventually(() => c.delivery.attemptsOf(job.id), (a) => a.length === 1);
    assert.deepEqual([first!.status, first!.error, Date.parse(first!.at)], [429, 'HTTP 429, Retry-After 30 s', t0]);
    // Where the schedule alone would have sent it (5 s ±10 %), and a millisecond short of 30 s: nothing.
    await c.moveTo(t0 + 5_500);
    await c.moveTo(t0 + 29_999);
    assert.equal(r.received.length, 1);
    await c.moveTo(t0 + 30_000);
    const at = await attemptTimes(c.delivery, job.id, 2);
    assert.deepEqual(at, [t0, t0 + 30_000]);
    assert.equal((await c.delivery.attemptsOf(job.id))[1]!.status, 200);
    assert.equal(r.received.length, 2);
    assert.equal(new Set(r.received.map((x) => x.headers['webhook-id'])).size, 1);
    assert.deepEqual(r.received.map((x) => Number(x.headers['webhook-timestamp'])), [t0 / 1_000, t0 / 1_000 + 30]);
    const secret = (await s.secrets.get(s.accountId)).secret;
    for (const x of r.received) assert.deepEqual(new Webhook(secret).verify(x.body, x.headers as Record<string, string>), { type: 'job.succeeded', timestamp: job.finished_at, data: job });
  });

  test(`${name}: a 503 with an HTTP-date Retry-After is retried no sooner than that date; one far off waits 24 h, not longer`, async (t) => {
    const s = await setup(t, backend, { start: false });
    const r = await s.receiver((req, res, n) => {
      // Two minutes after the attempt was signed (the test's clock), then a date far off.
      const retryAt = n === 0 ? Number(req.headers['webhook-timestamp']) * 1_000 + 120_000 : Date.UTC(2099, 0, 1);
      res.writeHead(n < 2 ? 503 : 200, { 'retry-after': new Date(retryAt).toUTCString() });
      res.end();
    });
    const c = clocked(s);
    const t0 = c.now;
    const job = finishedJob(r.url);
    await c.delivery.finished(job, s.accountId);
    await attemptTimes(c.delivery, job.id, 1);
    await c.moveTo(t0 + 119_999);
    assert.equal(r.received.length, 1);
    await c.moveTo(t0 + 120_000);
    await attemptTimes(c.delivery, job.id, 2);
    // Asked to wait until 2099: 24 h (the schedule's own 5 min ±10 % is shorter).
    await c.moveTo(t0 + 120_000 + 86_399_999);
    assert.equal(r.received.length, 2);
    await c.moveTo(t0 + 120_000 + 86_400_000);
    const attempts = await eventually(() => c.delivery.attemptsOf(job.id), (a) => a.length === 3);
    assert.deepEqual(
      attempts.map((a) => [Date.parse(a.at) - t0, a.status, a.error]),
      [
        [0, 503, 'HTTP 503, Retry-After 120 s'],
        [120_000, 503, 'HTTP 503, Retry-After 86400 s (the most honoured)'],
        [86_520_000, 200, null],
      ],
    );
    assert.equal(new Set(r.received.map((x) => x.headers['webhook-id'])).size, 1);
  });

  test(`${name}: the whole schedule: nine retries after 5 s, 5 min, 30 min, 2 h, 5 h, 10 h, 14 h, 20 h, 24 h (each within ±10 %), then no more; timeouts, resets, 4xx, 5xx and 3xx all retry, Retry-After ignored but on 429/503`, async (t) => {
    const s = await setup(t, backend, { start: false });
    const failures: Answer[] = [
      () => undefined, // never answers: cut at the timeout
      (_req, res) => res.socket!.destroy(), // connection reset
      status(500),
      status(404),
      status(503),
      status(429, { 'retry-after': 'soon' }),
      status(301, { location: 'http://127.0.0.1:1/', 'retry-after': '36000' }),
      status(500, { 'retry-after': '36000' }),
      status(408, { 'retry-after': '36000' }),
      status(502),
    ];
    const r = await s.receiver((req, res, n) => failures[n % failures.length]!(req, res, n));
    // The jitter's draws, one per retry: each share of the ±10 % band, its edges included.
    const draws = [0, 0.25, 0.5, 0.75, 1 - 1e-9, 0.75, 0.5, 0.25, 0];
    const shares = [-0.1, -0.05, 0, 0.05, 0.1, 0.05, 0, -0.05, -0.1];
    const table = [5_000, 300_000, 1_800_000, 7_200_000, 18_000_000, 36_000_000, 50_400_000, 72_000_000, 86_400_000];
    let drawn = 0;
    // Kept 30 days: the clock runs past the default week's purge.
    const c = clocked(s, { timeoutMs: 300, leaseMs: 2_000, keepMs: 30 * 86_400_000, random: () => draws[drawn++]! });
    const job = finishedJob(r.url);
    await c.delivery.finished(job, s.accountId);
    let at = (await attemptTimes(c.delivery, job.id, 1))[0]!;
    for (let i = 0; i < table.length; i++) {
      const wait = Math.round(table[i]! * (1 + shares[i]!));
      await c.moveTo(at + wait - 1);
      assert.equal(r.received.length, i + 1, `retry ${i + 1} not before ${wait} ms`);
      await c.moveTo(at + wait);
      const times = await attemptTimes(c.delivery, job.id, i + 2);
      assert.equal(times[i + 1]! - times[i]!, wait);
      assert.ok(wait >= table[i]! * 0.9 && wait <= table[i]! * 1.1);
      at = times[i + 1]!;
    }
    // Given up: two days later, nothing more.
    await c.moveTo(at + 2 * 86_400_000);
    assert.equal(r.received.length, 10);
    const attempts = await c.delivery.attemptsOf(job.id);
    assert.deepEqual(
      attempts.map((a) => [a.attempt, a.status]),
      [[1, null], [2, null], [3, 500], [4, 404], [5, 503], [6, 429], [7, 301], [8, 500], [9, 408], [10, 502]],
    );
    assert.equal(attempts[0]!.error, 'no answer within 300 ms');
    assert.deepEqual(attempts.slice(5, 9).map((a) => a.error), ['HTTP 429', 'redirect (301) not followed', 'HTTP 500', 'HTTP 408']);
    assert.equal(drawn, 9, 'one draw per retry');
    // Sent again by hand (POST /api/jobs/{id}/deliveries): at once, once; the schedule has run out.
    await c.delivery.redeliver(job, s.accountId);
    await attemptTimes(c.delivery, job.id, 11);
    await c.moveTo(c.now + 2 * 86_400_000);
    assert.equal(r.received.length, 11);
    assert.equal(drawn, 9, 'no retry after it');
    // One event: the same webhook-id and body every time, each attempt signed at its own time by the package's own rule.
    assert.equal(new Set(r.received.map((x) => x.headers['webhook-id'])).size, 1);
    assert.equal(new Set(r.received.map((x) => x.body)).size, 1);
    const wh = new Webhook((await s.secrets.get(s.accountId)).secret);
    const all = await c.delivery.attemptsOf(job.id);
    for (const [i, x] of r.received.entries()) {
      const ts = Number(x.headers['webhook-timestamp']);
      assert.equal(ts, Math.floor(Date.parse(all[i]!.at) / 1_000));
      assert.equal(x.headers['webhook-signature'], wh.sign(String(x.headers['webhook-id']), new Date(ts * 1_000), x.body));
    }
  });

  test(`${name}: a 410 stops the retries, whatever Retry-After it carries`, async (t) => {
    const s = await setup(t, backend, { start: false });
    const r = await s.receiver((_req, res, n) => {
      res.writeHead(n === 0 ? 500 : 410, { 'retry-after': '1' });
      res.end();
    });
    const c = clocked(s, { random: () => 0.5 });
    const job = finishedJob(r.url);
    await c.delivery.finished(job, s.accountId);
    const [t1] = await attemptTimes(c.delivery, job.id, 1);
    await c.moveTo(t1! + 5_000);
    await attemptTimes(c.delivery, job.id, 2);
    await c.moveTo(t1! + 4 * 86_400_000);
    assert.equal(r.received.length, 2);
    assert.deepEqual((await c.delivery.attemptsOf(job.id)).map((a) => [a.status, a.error]), [[500, 'HTTP 500'], [410, 'HTTP 410']]);
  });

  test(`${name}: 410 stops the retries after one attempt`, async (t) => {
    const s = await setup(t, backend);
    const r = await s.receiver(status(410));
    const job = finishedJob(r.url);
    await s.delivery.finished(job, s.accountId);
    await eventually(() => s.delivery.attemptsOf(job.id), (a) => a.length === 1);
    await nothingMore(s.store, s.watched!);
    assert.equal(r.received.length, 1);
    assert.deepEqual((await s.delivery.attemptsOf(job.id)).map((a) => [a.status, a.error]), [[410, 'HTTP 410']]);
  });

  test(`${name}: a redirect is not followed and counts as a failed attempt`, async (t) => {
    const s = await setup(t, backend, { tuning: { retryDelaysMs: [20] } });
    const elsewhere = await s.receiver(status(200));
    const r = await s.receiver(status(302, { location: `${elsewhere.url}/moved` }));
    const job = finishedJob(r.url);
    await s.delivery.finished(job, s.accountId);
    const attempts = await eventually(() => s.delivery.attemptsOf(job.id), (a) => a.length === 2);
    assert.deepEqual(attempts.map((a) => [a.status, a.error]), [
      [302, 'redirect (302) not followed'],
      [302, 'redirect (302) not followed'],
    ]);
    assert.equal(elsewhere.received.length, 0);
  });

  test(`${name}: a receiver that never answers is cut at the timeout`, async (t) => {
    const s = await setup(t, backend, { tuning: { timeoutMs: 300, retryDelaysMs: [] } });
    const r = await s.receiver(() => undefined);
    await assertCutAtTimeout(s, r);
    assert.equal(r.received.length, 1);
  });

  test(`${name}: a receiver that trickles its answer's head (a header line every 50 ms, never the blank line) is cut at the timeout`, async (t) => {
    const s = await setup(t, backend, { tuning: { timeoutMs: 300, retryDelaysMs: [] } });
    const timers: NodeJS.Timeout[] = [];
    t.after(() => timers.forEach((x) => clearInterval(x)));
    const r = await s.receiver((_req, res) => {
      const socket = res.socket!;
      socket.write('HTTP/1.1 200 OK\r\n');
      let n = 0;
      timers.push(setInterval(() => socket.writable && socket.write(`x-slow-${n++}: 1\r\n`), 50));
    });
    await assertCutAtTimeout(s, r);
  });

  test(`${name}: a huge answer is not read: the socket is dropped after a few KiB`, async (t) => {
    const s = await setup(t, backend);
    const MiB = Buffer.alloc(1 << 20, 'x');
    const TOTAL_MIB = 256;
    let finished = false;
    let closed = false;
    const r = await s.receiver((_req, res) => {
      res.writeHead(200, { 'content-type': 'text/plain' });
      res.on('close', () => (closed = true));
      let sent = 0;
      const more = (): void => {
        while (sent < TOTAL_MIB && !closed) {
          sent++;
          if (!res.write(MiB)) return void res.once('drain', more);
        }
        if (!closed) res.end(() => (finished = true));
      };
      more();
    });
    const job = finishedJob(r.url);
    await s.delivery.finished(job, s.accountId);
    const [a] = await eventually(() => s.delivery.attemptsOf(job.id), (x) => x.length === 1);
    assert.equal(a!.status, 200);
    assert.equal(a!.error, null);
    await eventually(async () => closed, (c) => c);
    assert.ok(closed, 'the receiver saw the socket close');
    assert.equal(finished, false, 'the receiver never got to send its whole answer');
  });

  test(`${name}: a 2xx whose body never ends is a success: the status is the answer`, async (t) => {
    // The timeout (FAST's) is far beyond eventually's give-up: waiting for the body's end would
    // end the attempt only then, as a timeout, and fail this test.
    const s = await setup(t, backend);
    const r = await s.receiver((_req, res) => {
      res.writeHead(200, { 'content-type': 'text/plain' });
      res.write('still going');
    });
    const job = finishedJob(r.url);
    await s.delivery.finished(job, s.accountId);
    const [a] = await eventually(() => s.delivery.attemptsOf(job.id), (x) => x.length === 1);
    assert.deepEqual([a!.status, a!.error], [200, null]);
  });

  test(`${name}: https receivers are verified by certificate and name`, async (t) => {
    const s = await setup(t, backend);
    const r = await s.receiver(status(200), true);
    const job = finishedJob(`https://localhost:${r.port}/tls`);
    await s.delivery.finished(job, s.accountId);
    const [a] = await eventually(() => s.delivery.attemptsOf(job.id), (x) => x.length === 1);
    assert.deepEqual([a!.status, a!.error], [200, null]);
    assert.equal(r.received[0]!.headers.host, `localhost:${r.port}`);
  });

  test(`${name}: checkUrl refuses a forbidden address (403) and a bad URL (400) without ever connecting`, async (t) => {
    const s = await setup(t, backend, { allow: false });
    const r = await s.receiver(status(200));
    for (const url of ['http://10.0.0.1/hook', `http://localhost:${r.port}/`, `http://127.0.0.1:${r.port}/`, 'https://[::1]/', 'http://169.254.169.254/latest', 'http://2130706433/']) {
      await assert.rejects(s.delivery.checkUrl(url), TargetForbiddenError, url);
    }
    for (const url of ['ftp://example.com/', 'http://user:pw@example.com/', 'not a url', `http://example.com/${'a'.repeat(2_100)}`, 'javascript:alert(1)']) {
      await assert.rejects(s.delivery.checkUrl(url), ValidationError, url);
    }
    assert.deepEqual(s.spy.calls, [], 'the dialer was never asked to connect');
    assert.equal(r.received.length, 0);
  });

  test(`${name}: at delivery time the address is checked again: a forbidden one is a failed attempt, never connected to`, async (t) => {
    const s = await setup(t, backend, { allow: false, tuning: { retryDelaysMs: [] } });
    const r = await s.receiver(status(200));
    const job = finishedJob(`http://localhost:${r.port}/`);
    await s.delivery.finished(job, s.accountId);
    const [a] = await eventually(() => s.delivery.attemptsOf(job.id), (x) => x.length === 1);
    assert.equal(a!.status, null);
    assert.match(a!.error ?? '', /resolves to 127\.0\.0\.1, which is in the blocked/);
    assert.deepEqual(s.spy.calls, []);
    assert.equal(r.received.length, 0);
  });

  test(`${name}: a name that re-resolves to loopback after checkUrl (DNS rebinding) is refused at delivery, never connected to`, async (t) => {
    const s = await setup(t, backend, { start: false });
    const r = await s.receiver(status(200));
    const dns = await startDnsServer({ 'hook.test': { A: (asked) => (asked === 0 ? ['93.184.216.34'] : ['127.0.0.1']), AAAA: [] } });
    s.atEnd(() => dns.close());
    const spy = connectSpy();
    const dialer = createDialer({ allowTargets: [], dnsServers: [{ host: dns.host, port: dns.port }] }, { connectFn: spy.fn });
    const w = createWebhooks({ store: s.store, dialer, secrets: s.secrets, tuning: { ...FAST, retryDelaysMs: [] } });
    s.atEnd(() => w.queue.close());
    const url = `http://hook.test:${r.port}/`;
    await w.delivery.checkUrl(url);
    const job = finishedJob(url);
    await w.delivery.finished(job, s.accountId);
    const [a] = await eventually(() => w.delivery.attemptsOf(job.id), (x) => x.length === 1);
    assert.equal(a!.status, null);
    assert.match(a!.error ?? '', /hook\.test resolves to 127\.0\.0\.1, which is in the blocked/);
    assert.deepEqual(spy.calls, []);
    assert.equal(r.received.length, 0);
  });

  test(`${name}: a delivery claimed by a dead instance is sent by another once the lease lapses`, async (t) => {
    // Instance A queues the event and claims it, then dies before sending.
    const a = await setup(t, backend, { start: false });
    const r = await a.receiver(status(200));
    const job = finishedJob(r.url);
    assert.equal(await a.delivery.enqueue(job, a.accountId), true);
    const LEASE_MS = 400;
    const claimedAt = Date.now();
    const [claimed] = await a.store.webhookDeliveries.claim('dead-instance', claimedAt, LEASE_MS, 10);
    assert.ok(claimed);
    assert.equal(claimed.attempt, 1);

    // Instance B: another connection to the same database, started after A died.
    const storeB = await a.b.open();
    const spy = connectSpy();
    const dialer = createDialer({ allowTargets: LOOPBACK, dnsServers: NO_DNS }, { connectFn: spy.fn });
    const b = createWebhooks({ store: storeB, dialer, secrets: new WebhookSecrets(storeB), tuning: FAST });
    a.atEnd(async () => {
      await b.queue.close();
      await storeB.close();
    });
    const [attempt] = await eventually(() => b.delivery.attemptsOf(job.id), (x) => x.length === 1);
    assert.deepEqual([attempt!.attempt, attempt!.status], [1, 200]);
    assert.equal(r.received.length, 1);
    assert.ok(r.received[0]!.at >= claimedAt + LEASE_MS, 'not before the lease lapsed');
    // The dead instance's late word changes nothing.
    assert.equal(await a.store.webhookDeliveries.complete(claimed.id, 'dead-instance', { attempt: 1, at: new Date().toISOString(), status: 500, duration_ms: 1, error: 'late' }, { state: 'failed' }), false);
    assert.equal((await b.delivery.attemptsOf(job.id)).length, 1);
  });

  test(`${name}: an instance shutting down gives its attempt back unrecorded; the restarted one sends it at once`, async (t) => {
    const s = await setup(t, backend, { start: false });
    let answered = 0;
    const r = await s.receiver((_req, res, n) => {
      // The first request hangs (the instance goes down meanwhile); the next is answered.
      if (n === 0) return;
      answered++;
      res.writeHead(200);
      res.end();
    });
    const job = finishedJob(r.url);
    const dialer = createDialer({ allowTargets: LOOPBACK, dnsServers: NO_DNS });
    // A lease far beyond eventually's give-up below: the second instance can only send the
    // attempt by then if the first gave it back.
    const first = createWebhooks({ store: s.store, dialer, secrets: s.secrets, tuning: { ...FAST, leaseMs: 3_600_000 } });
    await first.delivery.finished(job, s.accountId);
    await eventually(async () => r.received.length, (n) => n === 1);
    await first.queue.close();
    assert.deepEqual(await first.delivery.attemptsOf(job.id), [], 'an interrupted attempt is not recorded');

    const second = createWebhooks({ store: s.store, dialer, secrets: s.secrets, tuning: FAST });
    s.atEnd(() => second.queue.close());
    const [a] = await eventually(() => second.delivery.attemptsOf(job.id), (x) => x.length === 1, { what: 'the attempt sent again before the hour-long lease lapsed' });
    assert.deepEqual([a!.attempt, a!.status], [1, 200]);
    assert.equal(answered, 1);
    assert.equal(r.received[0]!.headers['webhook-id'], r.received[1]!.headers['webhook-id']);
  });

  test(`${name}: two instances sharing the database send each attempt once`, async (t) => {
    const s = await setup(t, backend);
    const r = await s.receiver(status(200));
    const storeB = await s.b.open();
    const dialer = createDialer({ allowTargets: LOOPBACK, dnsServers: NO_DNS });
    const b = watchedWebhooks({ store: storeB, dialer, secrets: new WebhookSecrets(storeB), tuning: { ...FAST, pollMs: 5 } });
    s.atEnd(async () => {
      await b.queue.close();
      await storeB.close();
    });
    const ids: string[] = [];
    for (let i = 0; i < 20; i++) {
      const job = finishedJob(r.url);
      ids.push(job.id);
      // Queued by either instance.
      await (i % 2 === 0 ? s.delivery : b.delivery).finished(job, s.accountId);
    }
    await eventually(async () => r.received.length, (n) => n >= 20);
    // An attempt sent twice would be under way in one instance or the other: both are waited for.
    await nothingMore(s.store, s.watched!, b);
    assert.equal(r.received.length, 20);
    assert.equal(new Set(r.received.map((x) => x.headers['webhook-id'])).size, 20);
    for (const id of ids) assert.equal((await s.delivery.attemptsOf(id)).length, 1);
  });

  test(`${name}: one account's backlog to a receiver that never answers holds its share of the slots, not all: another account's event goes out at once`, async (t) => {
    // FAST's timeout: the busy account's attempts hang for the whole test, however slow the machine.
    const s = await setup(t, backend, { tuning: { retryDelaysMs: [], concurrency: 4, perAccount: 2 } });
    const slow = await s.receiver(() => undefined);
    const fast = await s.receiver(status(200));
    const busy: string[] = [];
    for (let i = 0; i < 10; i++) {
      const job = finishedJob(slow.url);
      busy.push(job.id);
      await s.delivery.enqueue(job, s.accountId);
    }
    const { account: other } = await new AccountService(s.store).createAccount({ email: `other${jobs}@example.com`, name: 'Other' });
    const job = finishedJob(fast.url);
    await s.delivery.finished(job, other.id);
    const [a] = await eventually(() => s.delivery.attemptsOf(job.id), (x) => x.length === 1);
    assert.deepEqual([a!.attempt, a!.status], [1, 200]);
    // Sent while the busy account's first attempts still hang: none of them is recorded yet.
    for (const id of busy) assert.deepEqual(await s.delivery.attemptsOf(id), []);
    await eventually(async () => slow.received.length, (n) => n >= 2);
    // Two more looks with room for two attempts more: neither took one of the busy account's.
    const seen = s.watched!.looks();
    await eventually(() => s.watched!.looks() >= seen + 2, { what: 'two more looks of the queue' });
    assert.equal(s.watched!.queue.active, 2, 'the busy account holds its 2 slots, no more');
    assert.equal(slow.received.length, 2);
  });

  test(`${name}: due deliveries are taken round-robin between accounts: another account's event goes out when one attempt ends, not after the backlogs`, async (t) => {
    // Two slots, both held by a's and b's backlogs to a receiver that never answers.
    const s = await setup(t, backend, { start: false, tuning: { timeoutMs: 300, retryDelaysMs: [], concurrency: 2, perAccount: 2 } });
    const r = await s.receiver((req, res) => {
      if (req.url!.startsWith('/c')) res.writeHead(200).end();
    });
    const accounts = new AccountService(s.store);
    const b = (await accounts.createAccount({ email: `b${jobs}@example.com`, name: 'B' })).account.id;
    const c = (await accounts.createAccount({ email: `c${jobs}@example.com`, name: 'C' })).account.id;
    for (let i = 1; i <= 3; i++) {
      await s.delivery.enqueue(finishedJob(`${r.url}/a${i}`), s.accountId);
      await s.delivery.enqueue(finishedJob(`${r.url}/b${i}`), b);
    }
    await s.delivery.enqueue(finishedJob(`${r.url}/c1`), c);
    // The order deliveries are taken in (two taken together arrive in either order).
    const taken: string[] = [];
    const deliveries = s.store.webhookDeliveries;
    const store: Store = Object.assign(Object.create(s.store) as Store, {
      webhookDeliveries: {
        ...deliveries,
        claim: async (...args: Parameters<typeof deliveries.claim>) => {
          const got = await deliveries.claim(...args);
          taken.push(...got.map((d) => new URL(d.url).pathname));
          return got;
        },
      },
    });
    const w = createWebhooks({ store, dialer: createDialer({ allowTargets: LOOPBACK, dnsServers: NO_DNS }), secrets: s.secrets, tuning: { ...FAST, timeoutMs: 300, retryDelaysMs: [], concurrency: 2, perAccount: 2 } });
    s.atEnd(() => w.queue.close());
    await eventually(async () => r.received.length, (n) => n >= 7);
    assert.deepEqual(taken.slice(0, 2), ['/a1', '/b1'], "each account's oldest first, one per account");
    assert.equal(taken[2], '/c1', "the other account's event goes next, before either backlog");
    assert.deepEqual([...taken].sort(), ['/a1', '/a2', '/a3', '/b1', '/b2', '/b3', '/c1']);
  });

  test(`${name}: a suspended account's pending deliveries are dropped and none of its events is sent while it is suspended`, async (t) => {
    const s = await setup(t, backend, { start: false });
    const r = await s.receiver(status(200));
    const accounts = new AccountService(s.store);
    const { account } = await accounts.createAccount({ email: `suspended${jobs}@example.com`, name: 'S' });
    await s.delivery.enqueue(finishedJob(`${r.url}/s1`), account.id);
    await s.delivery.enqueue(finishedJob(`${r.url}/s2`), account.id);
    await accounts.setStatus(account.email, 'suspended');
    // An event queued since (its job finished as the suspension came): not sent while suspended either.
    await s.delivery.enqueue(finishedJob(`${r.url}/s3`), account.id);
    const w = createWebhooks({ store: s.store, dialer: createDialer({ allowTargets: LOOPBACK, dnsServers: NO_DNS }), secrets: s.secrets, tuning: FAST });
    s.atEnd(() => w.queue.close());
    // Another account's event, queued after them, goes out: theirs would have gone first.
    await w.delivery.finished(finishedJob(`${r.url}/other`), s.accountId);
    await eventually(async () => r.received.length, (n) => n >= 1);
    await eventually(() => s.store.webhookDeliveries.claim('probe', Date.now(), 1, 10), (x) => x.length === 0, { intervalMs: 20 });
    assert.deepEqual(r.received.map((x) => x.url), ['/other']);
  });

  test(`${name}: purge forgets finished deliveries and their attempts, never a pending one`, async (t) => {
    const s = await setup(t, backend, { start: false });
    const r = await s.receiver(status(200));
    const done = finishedJob(r.url);
    const waiting = finishedJob(r.url);
    await s.delivery.enqueue(done, s.accountId);
    const [claimed] = await s.store.webhookDeliveries.claim('me', Date.now(), 60_000, 1);
    assert.equal(await s.delivery.attempt(claimed!, 'me'), true);
    await s.delivery.enqueue(waiting, s.accountId);
    assert.equal((await s.delivery.attemptsOf(done.id)).length, 1);
    const future = new Date(Date.now() + 60_000).toISOString();
    assert.equal(await s.store.webhookDeliveries.purge(new Date(Date.now() - 60_000).toISOString()), 0);
    assert.equal(await s.store.webhookDeliveries.purge(future), 1);
    assert.deepEqual(await s.delivery.attemptsOf(done.id), []);
    assert.equal((await s.store.webhookDeliveries.claim('me', Date.now(), 60_000, 10)).length, 1, 'the pending one is still there');
  });

  test(`${name}: a finished job whose event was never queued is sent once by the sweep at start, as finished() would have sent it; other jobs are left alone`, async (t) => {
    const s = await setup(t, backend, { start: false });
    const r = await s.receiver(status(200));
    const succeeded = await finishedRow(s.store, s.accountId, { url: `${r.url}/a` });
    const failed = await finishedRow(s.store, s.accountId, { url: r.url, status: 'failed', items: [{ port: 1 }, { port: 2 }] });
    const cancelled = await finishedRow(s.store, s.accountId, { url: r.url, status: 'cancelled' });
    const queued = await finishedRow(s.store, s.accountId, { url: r.url });
    assert.equal(await s.delivery.enqueue(await rowView(s.store)((await s.store.jobs.find(queued))!), s.accountId), true);
    const ignored = [
      await finishedRow(s.store, s.accountId, { url: null }),
      await finishedRow(s.store, s.accountId, { url: r.url, agoMs: 25 * 60 * MINUTE }),
      await finishedRow(s.store, s.accountId, { url: r.url, status: 'running' }),
    ];
    const dialer = createDialer({ allowTargets: LOOPBACK, dnsServers: NO_DNS });
    const w = watchedWebhooks({ store: s.store, dialer, secrets: s.secrets, tuning: FAST });
    s.atEnd(() => w.queue.close());
    await eventually(async () => r.received.length, (n) => n >= 4);
    await nothingMore(s.store, w);
    const events = eventsOf(r);
    assert.deepEqual([...events.keys()].sort(), [succeeded, failed, cancelled, queued].sort());
    for (const [id, got] of events) assert.equal(got.length, 1, id);
    for (const id of ignored) assert.equal(events.has(id), false, id);

    const row = (await s.store.jobs.find(succeeded))!;
    const secret = await s.secrets.get(s.accountId);
    const sent = r.received.find((x) => x.url === '/a')!;
    assert.deepEqual(new Webhook(secret.secret).verify(sent.body, sent.headers as Record<string, string>), {
      type: 'job.succeeded',
      timestamp: row.finished_at,
      data: {
        id: succeeded,
        endpoint: '/port/scan',
        status: 'succeeded',
        progress: { done: 0, total: 1 },
        created_at: row.created_at,
        started_at: row.started_at,
        finished_at: row.finished_at,
        result: { open: false },
        error: null,
        webhook_url: `${r.url}/a`,
      },
    });
    const [f] = events.get(failed)!;
    assert.equal(f!.type, 'job.failed');
    assert.deepEqual(f!.data.result, [{ port: 1 }, { port: 2 }]);
    assert.deepEqual(f!.data.error, { success: false, error: 'timeout', message: 'too slow' });
    assert.equal(events.get(cancelled)![0]!.type, 'job.cancelled');

    // Swept again: nothing left to queue.
    const now = Date.now();
    assert.deepEqual(await w.delivery.enqueueMissed(new Date(now - 86_400_000), new Date(now), 100), { found: 0, queued: 0 });
    await nothingMore(s.store, w);
    assert.equal(r.received.length, 4);
  });

  test(`${name}: the sweep and finished() racing for the same jobs queue one event per job`, async (t) => {
    const s = await setup(t, backend, { start: false });
    const r = await s.receiver(status(200));
    const ids: string[] = [];
    for (let i = 0; i < 20; i++) ids.push(await finishedRow(s.store, s.accountId, { url: r.url, agoMs: 1_000 }));
    const views = await Promise.all(ids.map(async (id) => rowView(s.store)((await s.store.jobs.find(id))!)));
    // Another instance sweeping on its own connection too.
    const storeB = await s.b.open();
    s.atEnd(() => storeB.close());
    const b = new WebhookDelivery({ store: storeB, secrets: s.secrets, transport: new DialerWebhookTransport(createDialer({ allowTargets: LOOPBACK, dnsServers: NO_DNS })) });
    const since = new Date(Date.now() - 3_600_000);
    const until = new Date(Date.now() + 1_000);
    const [normal, ...sweeps] = await Promise.all([
      Promise.all(views.map((v) => s.delivery.enqueue(v, s.accountId))),
      s.delivery.enqueueMissed(since, until, 100),
      b.enqueueMissed(since, until, 100),
      s.delivery.enqueueMissed(since, until, 100),
    ]);
    const queued = normal.filter(Boolean).length + sweeps.reduce((n, x) => n + x.queued, 0);
    assert.equal(queued, 20, 'each job queued by exactly one of them');
    const pending = await s.store.webhookDeliveries.claim('me', Date.now(), 60_000, 100);
    assert.deepEqual(pending.map((d) => d.job_id).sort(), [...ids].sort());
    assert.deepEqual(await s.delivery.enqueueMissed(since, until, 100), { found: 0, queued: 0 });
  });

  test(`${name}: a backlog larger than a sweep's page is queued page after page, oldest first, without waiting for the next interval`, async (t) => {
    const s = await setup(t, backend, { start: false });
    const r = await s.receiver(status(200));
    const ids: string[] = [];
    for (let i = 0; i < WEBHOOK_SWEEP_PAGE + 5; i++) ids.push(await finishedRow(s.store, s.accountId, { url: r.url, agoMs: 10 * MINUTE - i * 1_000 }));
    const now = Date.now();
    assert.deepEqual(await s.store.webhookDeliveries.unqueued(new Date(now - 86_400_000).toISOString(), new Date(now).toISOString(), 3), ids.slice(0, 3));
    const dialer = createDialer({ allowTargets: LOOPBACK, dnsServers: NO_DNS });
    // The interval is far longer than the test: only the at-once follow-up can reach the last page.
    const w = watchedWebhooks({ store: s.store, dialer, secrets: s.secrets, tuning: { ...FAST, sweepMs: 3_600_000 } });
    s.atEnd(() => w.queue.close());
    await eventually(async () => r.received.length, (n) => n >= ids.length, { timeoutMs: 30_000 });
    await nothingMore(s.store, w);
    assert.equal(r.received.length, ids.length);
    assert.deepEqual([...eventsOf(r).keys()].sort(), [...ids].sort());
  });

  test(`${name}: the sweep looks back at most half of keepMs: a job whose delivery could have been purged is not queued again`, async (t) => {
    const s = await setup(t, backend, { start: false });
    const r = await s.receiver(status(200));
    const recent = await finishedRow(s.store, s.accountId, { url: r.url, agoMs: 30 * MINUTE });
    // A minute beyond the window (half of keepMs, 90 min): exactly at its edge it depended on the millisecond.
    const old = await finishedRow(s.store, s.accountId, { url: r.url, agoMs: 91 * MINUTE });
    const dialer = createDialer({ allowTargets: LOOPBACK, dnsServers: NO_DNS });
    const w = watchedWebhooks({ store: s.store, dialer, secrets: s.secrets, tuning: { ...FAST, keepMs: 3 * 60 * MINUTE, sweepWindowMs: 86_400_000 } });
    s.atEnd(() => w.queue.close());
    await eventually(async () => r.received.length, (n) => n >= 1);
    // Both were looked at in the same sweep (one page): the old one was left out, not yet reached.
    await nothingMore(s.store, w);
    assert.deepEqual([...eventsOf(r).keys()], [recent]);
    const now = Date.now();
    assert.deepEqual(await s.store.webhookDeliveries.unqueued(new Date(now - 86_400_000).toISOString(), new Date(now).toISOString(), 10), [old]);
  });

  test(`${name}: during a rotation's overlap the delivery carries both signatures, each verifying`, async (t) => {
    const s = await setup(t, backend);
    const r = await s.receiver(status(200));
    const old = await s.secrets.get(s.accountId);
    const rotated = await s.secrets.rotate(s.accountId);
    const job = finishedJob(r.url);
    await s.delivery.finished(job, s.accountId);
    await eventually(async () => r.received.length, (n) => n === 1);
    const got = r.received[0]!;
    assert.equal(String(got.headers['webhook-signature']).split(' ').length, 2);
    for (const secret of [old.secret, rotated.secret]) assert.ok(new Webhook(secret).verify(got.body, got.headers as Record<string, string>));
  });
}
