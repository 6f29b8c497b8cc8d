import assert from 'node:assert/strict';
import http from 'node:http';
import net from 'node:net';
import { after, before, describe, test, type TestContext } from 'node:test';
import type { FastifyInstance } from 'fastify';
import { composeApp, type AppDeps } from '../../src/compose-app.js';
import { loadConfig, type Config } from '../../src/config.js';
import { AccountService } from '../../src/domain/accounts/service.js';
import type { JobView } from '../../src/domain/jobs/types.js';
import { JOB_READS_PER_SECOND } from '../../src/http/routes/jobs.js';
import { itemsOf } from '../../src/domain/jobs/items.js';
import { createDialer, type ConnectFn, type Dialer } from '../../src/infra/net/dialer.js';
import type { Store } from '../../src/domain/store.js';
import type { Backend } from '../infra/store/backends.js';
import { assertMatchesOpenApi, checkResponses } from '../helpers/contract.js';
import { closedPort, hangingConnect, startListener } from '../infra/net/fixtures/connect-spy.js';
import { eventually } from '../helpers/eventually.js';
import { startDnsServer, type TestDnsServer } from '../infra/net/fixtures/dns-server.js';
import { startReceiver, status } from '../infra/webhooks/receiver.js';

/**
 * The job engine's behaviour through the API, run against every backend (SQLite, PostgreSQL)
 * and every queue (`queue` builds one; the embedded one by default). Everything stays on
 * loopback: listeners, the DNS fixture and NETDIAG_ALLOW_TARGETS=127.0.0.0/8.
 */
export interface JobEngine {
  name: string;
  backend: () => Backend;
  /** Extra app dependencies (a BullMQ queue), for the app's store and configuration, renewing leases every `renewMs`. */
  deps?: (store: Store, config: Config, renewMs: number) => Partial<AppDeps>;
}

/**
 * How often the suite's running jobs renew their leases: a cancel made through another instance
 * (or a suspension) is seen at the next renewal, which JOB_LEASE_RENEW_MS (5 s) made most of the
 * wall time of the two tests that wait for it, in each engine.
 */
const RENEW_MS = 250;

interface Tokens {
  a: string;
  b: string;
  free: string;
}

interface Started {
  app: FastifyInstance;
  store: Store;
  url: string;
  tokens: Tokens;
  api: (path: string, init?: RequestInit & { json?: unknown; token?: string }) => Promise<Response>;
}

type Ok<T> = { success: true; data: T; message: string };
type Err = { success: false; error: string; message: string; details?: Record<string, unknown> };

const ASYNC = { prefer: 'respond-async' };
/**
 * The scans of silent ports below wait their 30 s timeout (the most a scan may ask) unless
 * something ends them first: a wait for their sockets to close gives up before that, so sockets
 * closed by then were closed by what the test did (a cancel, a suspension), however slow the machine.
 */
const BEFORE_SCAN_TIMEOUT_MS = 20_000;
/** A wait for something the engine does on its own (a job starts, a webhook arrives): only a give-up. */
const GIVE_UP_MS = 20_000;
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/** Apps on one database, closed (newest first) before the database is dropped. */
function harness(t: TestContext, engine: JobEngine) {
  const backend = engine.backend();
  const closers: Array<() => Promise<void>> = [];
  t.after(async () => {
    for (const close of closers.reverse()) await close().catch(() => undefined);
    await backend.drop();
  });
  let tokens: Tokens | undefined;
  return {
    async start(opts: { env?: Record<string, string>; deps?: Partial<AppDeps> } = {}): Promise<Started> {
      const store = await backend.open();
      closers.push(() => store.close());
      if (!tokens) {
        const accounts = new AccountService(store);
        tokens = {
          a: (await accounts.createAccount({ email: 'a@example.com', name: 'A', plan: 'enterprise' })).token,
          b: (await accounts.createAccount({ email: 'b@example.com', name: 'B', plan: 'enterprise' })).token,
          free: (await accounts.createAccount({ email: 'f@example.com', name: 'F', plan: 'free' })).token,
        };
      }
      const config = loadConfig({ DATABASE_URL: 'sqlite::memory:', NETDIAG_DNS_SERVERS: '127.0.0.1:1', NETDIAG_ALLOW_TARGETS: '127.0.0.0/8', ...opts.env });
      const app = await composeApp({ config, store, logger: false, jobTuning: { renewMs: RENEW_MS }, ...engine.deps?.(store, config, RENEW_MS), ...opts.deps });
      checkResponses(t, app);
      closers.push(() => app.close());
      await app.listen({ port: 0, host: '127.0.0.1' });
      const address = app.server.address();
      const url = typeof address === 'object' && address ? `http://127.0.0.1:${address.port}` : '';
      const own = tokens;
      const api: Started['api'] = (path, init = {}) => {
        const { json, token, ...rest } = init;
        const headers = new Headers(rest.headers);
        headers.set('authorization', `Bearer ${token ?? own.a}`);
        if (json !== undefined) {
          headers.set('content-type', 'application/json');
          return fetch(url + path, { method: 'POST', ...rest, headers, body: JSON.stringify(json) });
        }
        return fetch(url + path, { ...rest, headers });
      };
      return { app, store, url, tokens: own, api };
    },
  };
}

/** POSTs as a job; checks the 202's headers and body against the document. */
async function createJob(s: Started, path: string, json: unknown, token?: string): Promise<JobView> {
  const res = await s.api(`/api${path}`, { json, headers: ASYNC, ...(token ? { token } : {}) });
  const body = (await res.json()) as Ok<JobView>;
  assert.equal(res.status, 202, JSON.stringify(body));
  await assertMatchesOpenApi(s.app, 'POST', `/api${path}`, 202, body);
  assert.equal(res.headers.get('location'), `/api/jobs/${body.data.id}`);
  assert.equal(res.headers.get('preference-applied'), 'respond-async');
  assert.match(body.data.id, /^job_[0-9A-Za-z]{24}$/);
  assert.equal(body.data.endpoint, path);
  return body.data;
}

/**
 * Reads the job (at most ~6 reads a second, under the per-job limit) until `done` holds. A
 * database that answers a new connection late (a loaded CI machine) is a 503: read again at the
 * next look, until the give-up.
 */
async function pollJob(s: Started, id: string, done: (j: JobView) => boolean = (j) => ['succeeded', 'failed', 'cancelled'].includes(j.status), token?: string): Promise<JobView> {
  const read = async (): Promise<JobView | null> => {
    const res = await s.api(`/api/jobs/${id}`, token ? { token } : {});
    if (res.status === 503) {
      await res.arrayBuffer();
      return null;
    }
    const body = (await res.json()) as Ok<JobView>;
    assert.equal(res.status, 200, JSON.stringify(body));
    await assertMatchesOpenApi(s.app, 'GET', '/api/jobs/{id}', 200, body);
    return body.data;
  };
  return (await eventually(read, (j) => j !== null && done(j), { timeoutMs: 30_000, intervalMs: 160, what: `job ${id}` }))!;
}

/**
 * Connects that never complete, recorded by port in the order they were dialled: a one-port scan
 * holds its job (and worker) until `release(port)` refuses its connect, so a test decides the
 * order runs end in and sees the order jobs start in. Ports in `real()` really connect.
 */
function heldConnects(real: () => readonly number[] = () => []) {
  const dialled: number[] = [];
  const sockets = new Map<number, net.Socket>();
  const fn: ConnectFn = (opts) => {
    const port = Number(opts.port);
    if (real().includes(port)) return net.connect(opts);
    const socket = new net.Socket();
    dialled.push(port);
    sockets.set(port, socket);
    return socket;
  };
  return {
    dialled,
    closed: (port: number) => sockets.get(port)?.destroyed === true,
    dialer: (): Dialer => createDialer({ allowTargets: ['127.0.0.0/8'], dnsServers: [{ host: '127.0.0.1', port: 1 }] }, { connectFn: fn }),
    release: (port: number) => sockets.get(port)!.destroy(Object.assign(new Error('connect ECONNREFUSED'), { code: 'ECONNREFUSED' })),
  };
}

/** A port result without its timings, which differ between two scans. */
const untimed = (items: unknown) => (items as Array<Record<string, unknown>>).map(({ response_time: _r, queued_ms: _q, ...rest }) => rest);

export function jobEngineSuite(engine: JobEngine): void {
  describe(`jobs (${engine.name})`, () => {
    let listeners: Array<Awaited<ReturnType<typeof startListener>>>;
    let dns: TestDnsServer;
    before(async () => {
      listeners = await Promise.all([startListener('127.0.0.1'), startListener('127.0.0.1')]);
      dns = await startDnsServer({ 'a.test': { A: ['127.0.0.1'] }, 'b.test': { A: ['127.0.0.2'] }, 'c.test': { A: ['127.0.0.3'] }, 'gone.test': { nxdomain: true } });
    });
    after(async () => {
      await Promise.all([dns.close(), ...listeners.map((l) => l.close())]);
    });

    test('a port scan as a job: 202, then succeeded with the synchronous data; items streamed in order', async (t) => {
      const s = await harness(t, engine).start();
      const ports = [...listeners.map((l) => l.port), await closedPort('127.0.0.1'), await closedPort('127.0.0.1')];
      const body = { host: '127.0.0.1', ports, timeout: 2 };
      const job = await createJob(s, '/port/scan-range', body);
      assert.equal(job.status, 'queued');
      assert.deepEqual(job.progress, { done: 0, total: ports.length });
      const done = await pollJob(s, job.id);
      assert.equal(done.status, 'succeeded');
      assert.deepEqual(done.progress, { done: ports.length, total: ports.length });
      assert.equal(done.error, null);
      assert.ok(done.started_at && done.finished_at);
      const sync = (await (await s.api('/api/port/scan-range', { json: body })).json()) as Ok<unknown[]>;
      assert.deepEqual(untimed(done.result), untimed(sync.data));

      // NDJSON: every item once, then the finished job.
      const res = await s.api(`/api/jobs/${job.id}`, { headers: { accept: 'application/x-ndjson' } });
      assert.equal(res.status, 200);
      assert.match(res.headers.get('content-type') ?? '', /^application\/x-ndjson/);
      const lines = (await res.text()).trim().split('\n').map((l) => JSON.parse(l) as Record<string, unknown>);
      const items = lines.slice(0, -1) as Array<{ seq: number; index: number; item: unknown }>;
      assert.deepEqual(items.map((i) => i.seq), ports.map((_, i) => i + 1));
      assert.deepEqual(items.map((i) => i.index).sort((x, y) => x - y), ports.map((_, i) => i));
      assert.deepEqual(untimed(items.sort((x, y) => x.index - y.index).map((i) => i.item)), untimed(sync.data));
      assert.equal((lines.at(-1) as unknown as JobView).status, 'succeeded');
      assert.deepEqual((lines.at(-1) as unknown as JobView).result, done.result);
      // The result is exactly the items: stored once, with them, not a second time with the job.
      assert.equal((await s.store.jobs.find(job.id))?.result, null);
    });

    test('an IP lookup as a job answers exactly the synchronous data', async (t) => {
      const s = await harness(t, engine).start();
      const job = await createJob(s, '/ip/lookup', { ip: '8.8.8.8' });
      assert.deepEqual(job.progress, { done: 0, total: 1 });
      assert.equal(job.result, null);
      const done = await pollJob(s, job.id);
      const sync = (await (await s.api('/api/ip/lookup', { json: { ip: '8.8.8.8' } })).json()) as Ok<unknown>;
      assert.equal(done.status, 'succeeded');
      assert.deepEqual(done.result, sync.data);
    });

    test('a bulk DNS lookup streams as SSE with ids, and Last-Event-ID resumes after the id', async (t) => {
      const s = await harness(t, engine).start({ env: { NETDIAG_DNS_SERVERS: `${dns.host}:${dns.port}` } });
      const domains = ['a.test', 'b.test', 'c.test', 'gone.test'];
      const job = await createJob(s, '/dns/lookup-bulk', { domains, type: 'A' });
      const res = await s.api(`/api/jobs/${job.id}`, { headers: { accept: 'text/event-stream' } });
      assert.match(res.headers.get('content-type') ?? '', /^text\/event-stream/);
      const events = (await res.text()).split('\n\n').filter((e) => e.includes('data:'));
      const items = events.filter((e) => e.includes('event: item'));
      assert.deepEqual(items.map((e) => /^id: (\d+)$/m.exec(e)?.[1]), ['1', '2', '3', '4']);
      const parsed = items.map((e) => JSON.parse(/^data: (.*)$/m.exec(e)![1]!) as { index: number; item: { domain: string; status: string } });
      assert.deepEqual(parsed.map((p) => [p.index, p.item.domain]).sort((x, y) => (x[0] as number) - (y[0] as number)), domains.map((d, i) => [i, d]));
      const last = JSON.parse(/^data: (.*)$/m.exec(events.at(-1)!)![1]!) as JobView;
      assert.ok(events.at(-1)!.includes('event: job'));
      assert.equal(last.status, 'succeeded');
      assert.deepEqual((last.result as Array<{ status: string }>).map((r) => r.status), ['NOERROR', 'NOERROR', 'NOERROR', 'NXDOMAIN']);
      const sync = (await (await s.api('/api/dns/lookup-bulk', { json: { domains, type: 'A' } })).json()) as Ok<Array<Record<string, unknown>>>;
      const shape = (r: unknown) => (r as Array<Record<string, unknown>>).map(({ domain, type, status, records }) => ({ domain, type, status, records }));
      assert.deepEqual(shape(last.result), shape(sync.data));
      // The stream's last line is the job as GET shows it.
      assert.deepEqual(last, ((await (await s.api(`/api/jobs/${job.id}`)).json()) as Ok<JobView>).data);

      const resumed = await s.api(`/api/jobs/${job.id}`, { headers: { accept: 'text/event-stream', 'last-event-id': '2' } });
      const resumedEvents = (await resumed.text()).split('\n\n');
      const again = resumedEvents.filter((e) => e.includes('event: item'));
      assert.deepEqual(again.map((e) => /^id: (\d+)$/m.exec(e)?.[1]), ['3', '4']);
      // Its last line is still the whole job: every item in its result, not only those resent.
      assert.deepEqual(JSON.parse(/^data: (.*)$/m.exec(resumedEvents.find((e) => e.includes('event: job'))!)![1]!), last);
    });

    test('refused before the 202 exactly as synchronously: validation, forbidden target, bad webhook_url; no job made', async (t) => {
      const s = await harness(t, engine).start();
      const cases: Array<[string, unknown]> = [
        // Past a job's bound too ("1-2000" is a job's, test/http/jobs-full-range.test.ts).
        ['/port/scan-range', { host: '127.0.0.1', ports: '1-70000' }],
        ['/port/scan-range', { host: '10.0.0.1', ports: [80] }],
        ['/port/scan', { host: '169.254.169.254', port: 80 }],
        ['/ip/lookup', { ip: 'nope' }],
        ['/ipv6/expand', { ipv6: 'zz::1' }],
        ['/dns/lookup', { domain: 'bad..name', type: 'A' }],
      ];
      for (const [path, json] of cases) {
        const sync = await s.api(`/api${path}`, { json });
        const job = await s.api(`/api${path}`, { json, headers: ASYNC });
        assert.ok(sync.status >= 400, `${path} ${JSON.stringify(json)}: ${sync.status}`);
        assert.equal(job.status, sync.status, `${path} ${JSON.stringify(json)}`);
        assert.deepEqual(await job.json(), await sync.json());
      }
      const badHook = await s.api('/api/ip/lookup', { json: { ip: '8.8.8.8', webhook_url: 'ftp://example.com/x' }, headers: ASYNC });
      assert.equal(badHook.status, 400);
      assert.equal(((await badHook.json()) as Err).details?.field, 'webhook_url');
      const list = (await (await s.api('/api/jobs')).json()) as Ok<{ jobs: JobView[] }>;
      assert.deepEqual(list.data.jobs, []);
    });

    test('ETag and 304; another account and malformed ids are 404; the list pages newest first', async (t) => {
      const s = await harness(t, engine).start();
      const first = await createJob(s, '/ipv6/validate', { ipv6: '::1' });
      const second = await createJob(s, '/ipv6/expand', { ipv6: '::1' });
      await pollJob(s, first.id);
      await pollJob(s, second.id);
      const res = await s.api(`/api/jobs/${first.id}`);
      const etag = res.headers.get('etag');
      assert.ok(etag);
      await res.arrayBuffer();
      const cached = await s.api(`/api/jobs/${first.id}`, { headers: { 'if-none-match': etag } });
      assert.equal(cached.status, 304);
      assert.equal(cached.headers.get('etag'), etag);
      assert.equal((await s.api(`/api/jobs/${first.id}`, { headers: { 'if-none-match': '"other"' } })).status, 200);

      for (const [path, token] of [[`/api/jobs/${first.id}`, s.tokens.b], ['/api/jobs/job_nope', s.tokens.a], [`/api/jobs/${first.id}x`, s.tokens.a], [`/api/jobs/${'x'.repeat(500)}`, s.tokens.a]] as const) {
        const r = await s.api(path, { token });
        assert.equal(r.status, 404, path);
        assert.equal(((await r.json()) as Err).error, 'not_found');
      }
      assert.equal((await s.api(`/api/jobs/${first.id}`, { method: 'DELETE', token: s.tokens.b })).status, 404);

      const page1 = (await (await s.api('/api/jobs?limit=1')).json()) as Ok<{ jobs: JobView[]; next_cursor: string | null }>;
      await assertMatchesOpenApi(s.app, 'GET', '/api/jobs', 200, page1);
      assert.deepEqual(page1.data.jobs.map((j) => j.id), [second.id]);
      assert.ok(page1.data.next_cursor);
      const page2 = (await (await s.api(`/api/jobs?limit=1&cursor=${page1.data.next_cursor}`)).json()) as Ok<{ jobs: JobView[]; next_cursor: string | null }>;
      assert.deepEqual(page2.data.jobs.map((j) => j.id), [first.id]);
      assert.equal(page2.data.next_cursor, null);
      assert.equal((await s.api('/api/jobs?status=queued')).status, 200);
      assert.equal((await s.api('/api/jobs?cursor=garbage!')).status, 400);
      assert.equal((await s.api('/api/jobs?limit=101')).status, 400);
      const other = (await (await s.api('/api/jobs', { token: s.tokens.b })).json()) as Ok<{ jobs: JobView[] }>;
      assert.deepEqual(other.data.jobs, []);
    });

    test('cancelling a running scan of silent ports closes its sockets at once; the job is cancelled; a finished one is a 409', async (t) => {
      const hanging = hangingConnect();
      const dialer = createDialer({ allowTargets: ['127.0.0.0/8'], dnsServers: [{ host: '127.0.0.1', port: 1 }] }, { connectFn: hanging.fn });
      const s = await harness(t, engine).start({ deps: { dialer } });
      const job = await createJob(s, '/port/scan-range', { host: '127.0.0.1', ports: '1-20', timeout: 30 });
      await eventually(() => hanging.sockets.length >= 20);
      assert.equal(hanging.sockets.length, 20, 'every port is dialled');
      const running = await pollJob(s, job.id, (j) => j.status === 'running');
      assert.deepEqual(running.result, []);
      const res = await s.api(`/api/jobs/${job.id}`, { method: 'DELETE' });
      const body = (await res.json()) as Ok<JobView>;
      assert.equal(res.status, 200);
      await assertMatchesOpenApi(s.app, 'DELETE', '/api/jobs/{id}', 200, body);
      assert.equal(body.data.status, 'cancelled');
      assert.ok(body.data.finished_at);
      await eventually(() => hanging.sockets.every((sock) => sock.destroyed), { timeoutMs: BEFORE_SCAN_TIMEOUT_MS });
      assert.ok(hanging.sockets.every((sock) => sock.destroyed), 'every socket of the job is closed by the cancel, not its timeout');
      await sleep(200);
      const later = (await (await s.api(`/api/jobs/${job.id}`)).json()) as Ok<JobView>;
      assert.equal(later.data.status, 'cancelled');
      const again = await s.api(`/api/jobs/${job.id}`, { method: 'DELETE' });
      assert.equal(again.status, 409);
      assert.equal(((await again.json()) as Err).error, 'conflict');
    });

    test("a running job holds one of its account's probe slots: past the plan's limit jobs wait queued, not fail", async (t) => {
      const hanging = hangingConnect();
      const dialer = createDialer({ allowTargets: ['127.0.0.0/8'], dnsServers: [{ host: '127.0.0.1', port: 1 }] }, { connectFn: hanging.fn });
      const s = await harness(t, engine).start({ deps: { dialer } });
      const free = s.tokens.free;
      // The free plan runs 2 at once.
      const jobs: JobView[] = [];
      for (const port of [1, 2, 3]) jobs.push(await createJob(s, '/port/scan', { host: '127.0.0.1', port, timeout: 30 }, free));
      await eventually(() => hanging.sockets.length >= 2);
      await sleep(1_500);
      assert.equal(hanging.sockets.length, 2, 'two jobs dial, the third waits');
      const statuses = async () => Promise.all(jobs.map(async (j) => ((await (await s.api(`/api/jobs/${j.id}`, { token: free })).json()) as Ok<JobView>).data.status));
      assert.deepEqual((await statuses()).sort(), ['queued', 'running', 'running']);
      // The account's synchronous probes are refused meanwhile (its slots are taken).
      const sync = await s.api('/api/port/scan', { json: { host: '127.0.0.1', port: 4, timeout: 1 }, token: free });
      assert.equal(sync.status, 429);
      assert.equal(((await sync.json()) as Err).details?.window, 'concurrent');
      const running = (await Promise.all(jobs.map(async (j) => [j.id, ((await (await s.api(`/api/jobs/${j.id}`, { token: free })).json()) as Ok<JobView>).data.status] as const))).find(([, st]) => st === 'running')!;
      assert.equal((await s.api(`/api/jobs/${running[0]}`, { method: 'DELETE', token: free })).status, 200);
      // A slot is freed only by the cancel: the running scans hang until their 30 s timeout.
      await eventually(() => hanging.sockets.length >= 3, { timeoutMs: BEFORE_SCAN_TIMEOUT_MS });
      assert.equal(hanging.sockets.length, 3, 'the waiting job runs once a slot is free');
      assert.deepEqual((await statuses()).sort(), ['cancelled', 'running', 'running']);
    });

    test('streams end when the client goes away and when the server closes; a running job goes back to the queue and runs at the next start', async (t) => {
      const hanging = hangingConnect();
      const dialer = createDialer({ allowTargets: ['127.0.0.0/8'], dnsServers: [{ host: '127.0.0.1', port: 1 }] }, { connectFn: hanging.fn });
      const h = harness(t, engine);
      const s = await h.start({ deps: { dialer } });
      const job = await createJob(s, '/port/scan-range', { host: '127.0.0.1', ports: '1-3', timeout: 30 });
      await eventually(() => hanging.sockets.length >= 3);
      // A client that reads the stream's headers and hangs up (its own socket: fetch's pool may open spare ones).
      const leftStatus = await new Promise<number>((resolve, reject) => {
        const req = http.get(`${s.url}/api/jobs/${job.id}`, { agent: false, headers: { authorization: `Bearer ${s.tokens.a}`, accept: 'application/x-ndjson' } }, (res) => {
          resolve(res.statusCode ?? 0);
          req.destroy();
        });
        req.on('error', reject);
      });
      assert.equal(leftStatus, 200);
      const stream = await s.api(`/api/jobs/${job.id}`, { headers: { accept: 'text/event-stream' } });
      const text = stream.text();
      // Closing does not wait for the job (its connects would end only at their 30 s timeout,
      // and it would be succeeded, not queued, below).
      await s.app.close();
      assert.match(await text, /^retry: /);
      assert.ok(hanging.sockets.every((sock) => sock.destroyed), "the job's sockets are closed at shutdown");
      const row = await s.store.jobs.find(job.id);
      assert.equal(row?.status, 'queued', 'given back to the queue');
      const next = await h.start();
      const done = await pollJob(next, job.id);
      assert.equal(done.status, 'succeeded');
      assert.equal((done.result as unknown[]).length, 3);
    });

    test('a job cancelled through another instance stops where it runs: its sockets close at the next lease renewal', async (t) => {
      const hanging = hangingConnect();
      const dialer = createDialer({ allowTargets: ['127.0.0.0/8'], dnsServers: [{ host: '127.0.0.1', port: 1 }] }, { connectFn: hanging.fn });
      const h = harness(t, engine);
      const acceptor = await h.start({ env: { NETDIAG_WORKERS: '0' } });
      const worker = await h.start({ deps: { dialer } });
      const job = await createJob(acceptor, '/port/scan-range', { host: '127.0.0.1', ports: '1-5', timeout: 30 });
      await eventually(() => hanging.sockets.length >= 5, { timeoutMs: GIVE_UP_MS });
      assert.equal(hanging.sockets.length, 5, 'the other instance runs it');
      const res = await acceptor.api(`/api/jobs/${job.id}`, { method: 'DELETE' });
      assert.equal(res.status, 200);
      assert.equal(((await res.json()) as Ok<JobView>).data.status, 'cancelled');
      await eventually(() => hanging.sockets.every((sock) => sock.destroyed), { timeoutMs: BEFORE_SCAN_TIMEOUT_MS });
      assert.ok(hanging.sockets.every((sock) => sock.destroyed), 'closed at a lease renewal, not by the timeout');
      assert.equal((await worker.store.jobs.find(job.id))?.status, 'cancelled');
    });

    test("queued jobs are taken round-robin between accounts: another account's job starts when one run ends, not after a backlog (two instances)", async (t) => {
      const held = heldConnects();
      const h = harness(t, engine);
      const acceptor = await h.start({ env: { NETDIAG_WORKERS: '0' } });
      const scan = (port: number, token: string) => createJob(acceptor, '/port/scan', { host: '127.0.0.1', port, timeout: 30 }, token);
      // a and b (enterprise: their work-in-flight limit is not what holds them here) queue three each.
      for (const port of [1, 2, 3]) await scan(port, acceptor.tokens.a);
      for (const port of [11, 12, 13]) await scan(port, acceptor.tokens.b);
      await h.start({ env: { NETDIAG_WORKERS: '1' }, deps: { dialer: held.dialer() } });
      await h.start({ env: { NETDIAG_WORKERS: '1' }, deps: { dialer: held.dialer() } });
      await eventually(() => held.dialled.length >= 2, { timeoutMs: GIVE_UP_MS });
      assert.deepEqual([...held.dialled].sort((x, y) => x - y), [1, 11], "each account's oldest job first, one per account");
      // Another account's one job, queued behind both backlogs while both workers are busy.
      await scan(21, acceptor.tokens.free);
      held.release(held.dialled[0]!);
      await eventually(() => held.dialled.length >= 3, { timeoutMs: GIVE_UP_MS });
      assert.equal(held.dialled[2], 21, "the other account's job runs next, before either backlog");
      // The rest run as runs end, every one of them.
      const released = new Set([held.dialled[0]!]);
      while (released.size < 7) {
        const next = held.dialled.find((port) => !released.has(port));
        assert.ok(next !== undefined, `dialled ${held.dialled.join(',')}`);
        released.add(next);
        const before = held.dialled.length;
        held.release(next);
        if (before < 7) await eventually(() => held.dialled.length > before, { timeoutMs: GIVE_UP_MS });
      }
      assert.deepEqual([...held.dialled].sort((x, y) => x - y), [1, 2, 3, 11, 12, 13, 21]);
    });

    test("a long scan gives its turn to another account's job between batches, then goes on from where it was: no stored port dialled again", async (t) => {
      // Ports 1-100 refuse at once; 101-200 hang (until `answer()`: then they refuse too).
      const dials = new Map<number, number>();
      const held: net.Socket[] = [];
      let answering = false;
      const answer = () => {
        answering = true;
        for (const socket of held) if (!socket.destroyed) refuse(socket);
      };
      const refuse = (socket: net.Socket) => process.nextTick(() => socket.destroy(Object.assign(new Error('connect ECONNREFUSED'), { code: 'ECONNREFUSED' })));
      const fn: ConnectFn = (opts) => {
        const port = Number(opts.port);
        dials.set(port, (dials.get(port) ?? 0) + 1);
        const socket = new net.Socket();
        if (port <= 100 || answering) refuse(socket);
        else held.push(socket);
        return socket;
      };
      const dialer = createDialer({ allowTargets: ['127.0.0.0/8'], dnsServers: [{ host: '127.0.0.1', port: 1 }] }, { connectFn: fn });
      const s = await harness(t, engine).start({ env: { NETDIAG_WORKERS: '1' }, deps: { dialer } });
      const scan = await createJob(s, '/port/scan-range', { host: '127.0.0.1', ports: '1-200', timeout: 30 });
      await eventually(async () => (await s.store.jobs.find(scan.id))!.progress_done === 100, { what: 'the answering ports stored', timeoutMs: 10_000 });
      const firstStart = (await s.store.jobs.find(scan.id))!.started_at;
      // The one worker is held by a scan that would run 30 s more: another account's job starts at its next turn check.
      const other = await createJob(s, '/ipv6/validate', { ipv6: '::1' }, s.tokens.b);
      const done = await pollJob(s, other.id, undefined, s.tokens.b);
      assert.equal(done.status, 'succeeded');
      const during = await pollJob(s, scan.id, () => true);
      assert.equal(during.status, 'running', 'the scan gave its turn and stays running to the API');
      assert.equal(during.progress.done, 100, 'with its progress');
      answer();
      const finished = await pollJob(s, scan.id);
      assert.equal(finished.status, 'succeeded');
      assert.equal(finished.started_at, firstStart, 'its first start');
      assert.deepEqual((finished.result as Array<{ port: number }>).map((r) => r.port), Array.from({ length: 200 }, (_, i) => i + 1));
      assert.equal(finished.progress.done, 200);
      const items = itemsOf(await s.store.jobs.itemBatches(scan.id, 0, 10_000));
      assert.deepEqual(items.map((it) => it.seq), Array.from({ length: 200 }, (_, i) => i + 1), 'seqs 1..200, without a gap');
      assert.deepEqual(items.map((it) => it.index).sort((a, b) => a - b), Array.from({ length: 200 }, (_, i) => i), 'each port stored once');
      for (let port = 1; port <= 100; port++) assert.equal(dials.get(port), 1, `port ${port} (stored before the turn) dialled once`);
      for (let port = 101; port <= 200; port++) assert.ok((dials.get(port) ?? 0) >= 1, `port ${port} dialled`);
    });

    test('suspending an account cancels its queued and running jobs at once (error: the 403 body), sends no webhook for them, and starts nothing of it', async (t) => {
      const receiver = await startReceiver(status(200));
      t.after(() => receiver.close());
      const held = heldConnects(() => [receiver.port]);
      const h = harness(t, engine);
      const acceptor = await h.start({ env: { NETDIAG_WORKERS: '0' } });
      await h.start({ env: { NETDIAG_WORKERS: '4' }, deps: { dialer: held.dialer() } });
      const free = acceptor.tokens.free;
      const jobs: JobView[] = [];
      for (const port of [1, 2, 3, 4]) jobs.push(await createJob(acceptor, '/port/scan', { host: '127.0.0.1', port, timeout: 30, webhook_url: `${receiver.url}/free` }, free));
      // The free plan runs 2 at once: two run, two wait queued.
      await eventually(() => held.dialled.length >= 2, { timeoutMs: GIVE_UP_MS });
      const running = [...held.dialled];
      assert.equal(running.length, 2);
      // As `netdiag account suspend` does it: through the account service, from a process running no job.
      await new AccountService(acceptor.store).setStatus('f@example.com', 'suspended');
      const refused = await acceptor.api('/api/user', { token: free });
      assert.equal(refused.status, 403);
      const body = (await refused.json()) as Err;
      for (const j of jobs) {
        const row = (await acceptor.store.jobs.find(j.id))!;
        assert.equal(row.status, 'cancelled', j.id);
        assert.deepEqual(JSON.parse(row.error!), body, j.id);
      }
      // The worker running two of them stops them (at its next lease renewal, as a cancel elsewhere).
      await eventually(() => running.every((port) => held.closed(port)), { timeoutMs: BEFORE_SCAN_TIMEOUT_MS });
      assert.ok(running.every((port) => held.closed(port)), "the suspended account's running scans are stopped");
      // Another account's job and its webhook go through; the suspended account's events would have gone before it.
      const other = await createJob(acceptor, '/ipv6/validate', { ipv6: '::1', webhook_url: `${receiver.url}/a` });
      await pollJob(acceptor, other.id);
      await eventually(() => receiver.received.length >= 1, { timeoutMs: GIVE_UP_MS });
      assert.deepEqual(receiver.received.map((r) => r.url), ['/a'], 'no event for the cancelled jobs');
      assert.deepEqual(held.dialled, running, 'no queued scan of the suspended account started');
    });

    test('a job past its time to live is a 404', async (t) => {
      let now = Date.now();
      const s = await harness(t, engine).start({ deps: { clock: () => new Date(now) } });
      const job = await createJob(s, '/ipv6/validate', { ipv6: '::1' });
      await pollJob(s, job.id);
      now += 8 * 86_400_000;
      const res = await s.api(`/api/jobs/${job.id}`);
      assert.equal(res.status, 404);
      assert.equal((await s.api(`/api/jobs/${job.id}`, { method: 'DELETE' })).status, 404);
      // The purge removes it from the database.
      await s.store.jobs.purge(new Date(now - 7 * 86_400_000).toISOString());
      assert.equal(await s.store.jobs.find(job.id), undefined);
    });

    test('a job left running by a dead process (its lease lapsed) is run again by a new app on the same database', async (t) => {
      const h = harness(t, engine);
      const acceptor = await h.start({ env: { NETDIAG_WORKERS: '0' } });
      const job = await createJob(acceptor, '/ip/lookup', { ip: '8.8.8.8' });
      await sleep(300);
      assert.equal((await acceptor.store.jobs.find(job.id))?.status, 'queued', 'NETDIAG_WORKERS=0 accepts only');
      // A process claimed it and died: its lease lapsed.
      const claimed = await acceptor.store.jobs.claim(job.id, 'dead-process', Date.now(), Date.now() - 1, new Date().toISOString());
      assert.equal(claimed?.status, 'running');
      const worker = await h.start();
      const done = await pollJob(worker, job.id);
      assert.equal(done.status, 'succeeded');
      assert.equal((await worker.store.jobs.find(job.id))?.attempts, 2);
    });

    test("reading a job is no call (a free account reads it past its minute's 10), but past 10 a second is a 429", async (t) => {
      const s = await harness(t, engine).start();
      const started = Date.now();
      const job = await createJob(s, '/ipv6/validate', { ipv6: '::1' }, s.tokens.free);
      for (let i = 0; i < 14; i++) {
        const res = await s.api(`/api/jobs/${job.id}`, { token: s.tokens.free });
        assert.equal(res.status, 200, `read ${i + 1}`);
        await res.arrayBuffer();
        await sleep(110);
      }
      const burst = await Promise.all(Array.from({ length: 25 }, () => s.api(`/api/jobs/${job.id}`, { token: s.tokens.free })));
      const limited = burst.filter((r) => r.status === 429);
      assert.ok(limited.length >= 5, `${limited.length} of 25 refused`);
      assert.equal(limited[0]!.headers.get('retry-after'), '1');
      const refused = (await limited[0]!.json()) as Err & { details: Record<string, unknown> };
      assert.equal(refused.error, 'rate_limit_exceeded');
      // The limit as it is (10 reads a second of one job), not the plan's 10 a minute or any other figure.
      assert.deepEqual({ ...refused.details, reset_at: undefined }, { limit: JOB_READS_PER_SECOND, remaining: 0, reset_at: undefined, window: 'job_reads', per: 'job' });
      assert.match(String(refused.details.reset_at), /^\d{4}-\d\d-\d\d \d\d:\d\d:\d\d$/);
      await Promise.all(burst.map((r) => r.arrayBuffer().catch(() => undefined)));
      // The plan's windows saw one call: the job's creation.
      const stats = (await (await s.api('/api/usage/stats', { token: s.tokens.free })).json()) as Ok<{ windows: Record<'minute' | 'hour' | 'day', { used: number }> }>;
      // The windows are calendar ones: a window that began between the two calls holds only the second.
      const same = (ms: number) => Math.floor(started / ms) === Math.floor(Date.now() / ms);
      for (const [name, ms] of [['minute', 60_000], ['hour', 3_600_000], ['day', 86_400_000]] as const) {
        assert.equal(stats.data.windows[name].used, same(ms) ? 2 : 1, `${name}: the creation and this stats call`);
      }
    });
  });
}
