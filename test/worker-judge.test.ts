import assert from 'node:assert/strict';
import { spawn, type ChildProcess } from 'node:child_process';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, test, type TestContext } from 'node:test';
import { composeApp } from '../src/compose-app.js';
import { loadConfig } from '../src/config.js';
import { AccountService } from '../src/domain/accounts/service.js';
import type { JobView } from '../src/domain/jobs/types.js';
import { openSqliteStore } from '../src/infra/store/sqlite.js';
import type { Store } from '../src/domain/store.js';
import { closedProxyPort, startHttpProxy, startTlsTarget } from './fixtures/proxies.js';
import { tempDir } from './helpers/build.js';
import { freePort } from './helpers/free-port.js';
import { hasRedisServer, startRedisServer } from './helpers/redis-server.js';
import { TEST_DATABASE_URL, postgresBackend } from './infra/store/backends.js';
import { eventually } from './helpers/eventually.js';

// own process: workers it starts and kills (scripts/test-tree.mjs).

/**
 * Issue 24: README's "several machines" block as written. API instances with NETDIAG_WORKERS=0
 * accept proxy jobs; `netdiag worker` processes (no HTTP server, so no judge of their own) run
 * them against the judge every process shares: NETDIAG_JUDGE_URL, else NETDIAG_PUBLIC_URL +
 * /judge, else the judge an API instance recorded in the database. A worker with no judge it can
 * reach never reports a proxy `failed`: the job fails with the 503 service_unavailable body, and
 * the worker warns at start.
 */

const BIN = fileURLToPath(new URL('../bin/netdiag.js', import.meta.url));
const SECRET = 'a3'.repeat(32);

interface Worker {
  child: ChildProcess;
  /** The `netdiag worker:` start line (stderr). */
  ready: Promise<string>;
  /** What it logged (pino JSON lines on stdout) so far. */
  log: () => Array<{ level: number; msg: string; [k: string]: unknown }>;
  stop(): Promise<number | null>;
}

function startWorker(t: TestContext, env: Record<string, string>): Worker {
  const child = spawn(process.execPath, [BIN, 'worker'], { env: { ...process.env, LOG_LEVEL: 'info', LOG_FORMAT: 'json', ...env }, stdio: ['ignore', 'pipe', 'pipe'] });
  let err = '';
  let out = '';
  child.stdout!.setEncoding('utf8').on('data', (d: string) => void (out += d));
  const exited = new Promise<number | null>((resolve) => child.once('exit', (code) => resolve(code)));
  const ready = new Promise<string>((resolve, reject) => {
    child.stderr!.setEncoding('utf8').on('data', (d: string) => {
      err += d;
      const line = err.split('\n').find((l) => l.startsWith('netdiag worker:'));
      if (line) resolve(line);
    });
    void exited.then((code) => reject(new Error(`worker exited ${code}: ${err}`)));
  });
  ready.catch(() => undefined);
  t.after(() => {
    if (child.exitCode === null && child.signalCode === null) child.kill('SIGKILL');
  });
  return {
    child,
    ready,
    log: () =>
      out
        .split('\n')
        .filter((l) => l.startsWith('{'))
        .map((l) => JSON.parse(l) as { level: number; msg: string }),
    async stop() {
      child.kill('SIGTERM');
      return exited;
    },
  };
}

type Answer<T> = { success: boolean; data: T };

async function finished(read: () => Promise<JobView>): Promise<JobView> {
  // Under the 10 reads a second a job allows.
  return eventually(read, (job) => job.status !== 'queued' && job.status !== 'running', { timeoutMs: 30_000, intervalMs: 150, what: 'the job to finish' });
}

/** A warning (pino level 40) the worker logged about the judge. */
function judgeWarning(worker: Worker): { msg: string } | undefined {
  return worker.log().find((l) => l.level === 40 && /judge/.test(l.msg));
}

/** The warning, once its line is out (pino writes stdout asynchronously, after the start line on stderr). */
async function startWarning(worker: Worker): Promise<{ msg: string }> {
  const warned = await eventually(() => judgeWarning(worker), (w) => w !== undefined, { timeoutMs: 10_000, intervalMs: 20, what: 'the worker warns at start' });
  return warned!;
}

function assertMisconfigured(job: JobView, reason: RegExp): void {
  assert.equal(job.status, 'failed', JSON.stringify(job));
  assert.equal(job.result, null, 'no proxy result at all, so none says failed');
  const error = job.error as { success: boolean; error: string; message: string };
  assert.equal(error.success, false);
  assert.equal(error.error, 'service_unavailable');
  assert.match(error.message, /misconfigured/);
  assert.match(error.message, reason);
}

// Each test has its own database, Redis and processes: they run at once.
describe('workers and the judge', { concurrency: true }, () => {
  test('README "several machines" (PostgreSQL + Redis): a worker checks a working proxy as working, by the public URL or the judge recorded in the database; with a judge it cannot reach, the job fails as misconfigured and the worker warns at start', {
    skip: !TEST_DATABASE_URL ? 'set TEST_DATABASE_URL (PostgreSQL): API instances and workers share a database' : !hasRedisServer ? 'needs redis-server (the test starts one of its own, so no other test takes its jobs)' : false,
    timeout: 120_000,
  }, async (t) => {
    const dbUrl = TEST_DATABASE_URL!;
    // A Redis of this test's own: a worker process has the default queue name and prefix, and
    // other test files' processes on the shared Redis would take its job ids (and it theirs).
    const redisPort = await freePort();
    await startRedisServer(t, redisPort);
    const backend = postgresBackend(dbUrl);
    const store = await backend.open();
    const tls = await startTlsTarget();
    const proxy = await startHttpProxy({ kind: 'elite' });
    const apiPort = await freePort();
    const sep = dbUrl.includes('?') ? '&' : '?';
    // Everywhere: the same database, Redis, judge secret and public URL (README).
    const everywhere = {
      DATABASE_URL: `${dbUrl}${sep}options=${encodeURIComponent(`-c search_path=${backend.schema}`)}`,
      REDIS_URL: `redis://127.0.0.1:${redisPort}/0`,
      NETDIAG_JUDGE_SECRET: SECRET,
      NETDIAG_PUBLIC_URL: `http://127.0.0.1:${apiPort}`,
      NETDIAG_ALLOW_TARGETS: '127.0.0.0/8',
      NETDIAG_DNS_SERVERS: '127.0.0.1:1',
      NETDIAG_SSL_CHECK_TARGET: tls.address,
    };
    const app = await composeApp({ config: loadConfig({ ...everywhere, NETDIAG_WORKERS: '0' }), store, logger: false });
    t.after(async () => {
      await app.close();
      await store.close();
      await backend.drop();
      await Promise.all([tls.close(), proxy.close()]);
    });
    await app.listen({ port: apiPort, host: '127.0.0.1' });
    const { token } = await new AccountService(store).createAccount({ email: 'm@example.com', name: 'M', plan: 'enterprise' });
    const api = async (path: string, json?: unknown): Promise<Response> =>
      fetch(`http://127.0.0.1:${apiPort}${path}`, {
        method: json === undefined ? 'GET' : 'POST',
        headers: { authorization: `Bearer ${token}`, ...(json === undefined ? {} : { 'content-type': 'application/json', prefer: 'respond-async' }) },
        ...(json === undefined ? {} : { body: JSON.stringify(json) }),
      });
    const proxyJob = async (): Promise<JobView> => {
      const created = await api('/api/proxy/check', { proxy: proxy.address, check_speed: false });
      assert.equal(created.status, 202);
      const { id } = ((await created.json()) as Answer<JobView>).data;
      return finished(async () => ((await (await api(`/api/jobs/${id}`)).json()) as Answer<JobView>).data);
    };
    const assertWorking = (job: JobView): void => {
      assert.equal(job.status, 'succeeded', JSON.stringify(job.error));
      const result = job.result as { status: string; protocol: string; error: string | null; anonymity_level: string };
      assert.deepEqual([result.status, result.protocol, result.error, result.anonymity_level], ['working', 'http', null, 'elite']);
    };

    // 1. The README block as written: the worker's judge is NETDIAG_PUBLIC_URL + /judge.
    const asWritten = startWorker(t, { ...everywhere, NETDIAG_WORKERS: '8' });
    assert.match(await asWritten.ready, new RegExp(`judge http://127\\.0\\.0\\.1:${apiPort}/judge`));
    assertWorking(await proxyJob());
    assert.ok(asWritten.log().some((l) => l.msg === 'worker started: effective configuration'), 'its start was logged');
    assert.equal(judgeWarning(asWritten), undefined, 'no warning about the judge');
    assert.equal(await asWritten.stop(), 0);

    // 2. A worker told nothing of the judge: the one the API instance recorded in the database.
    const { NETDIAG_PUBLIC_URL: _public, ...withoutUrl } = everywhere;
    const fromDatabase = startWorker(t, { ...withoutUrl, NETDIAG_WORKERS: '8' });
    assert.match(await fromDatabase.ready, new RegExp(`judge http://127\\.0\\.0\\.1:${apiPort}/judge`));
    assertWorking(await proxyJob());
    assert.equal(await fromDatabase.stop(), 0);

    // 3. A judge URL nothing answers at: never "failed" for the proxy; the worker said so at start.
    const deadJudge = `http://${await closedProxyPort()}/judge`;
    const unreachable = startWorker(t, { ...everywhere, NETDIAG_JUDGE_URL: deadJudge, NETDIAG_WORKERS: '8' });
    assert.match(await unreachable.ready, /not answering: proxy jobs fail \(503\)/);
    const warned = await startWarning(unreachable);
    assert.ok(warned.msg.includes(deadJudge), warned.msg);
    assertMisconfigured(await proxyJob(), new RegExp(deadJudge.replace(/[.]/g, '\\.')));
    assert.equal(await unreachable.stop(), 0);
  });

  test('a worker with no judge at all (SQLite, no judge URL set, no API instance ever listened): the proxy job fails as misconfigured, the worker warns at start; once an API instance listens, its recorded judge is used', { timeout: 60_000 }, async (t) => {
    const path = join(tempDir(t), 'shared.db');
    const env = { DATABASE_URL: `sqlite:${path}`, NETDIAG_ALLOW_TARGETS: '127.0.0.0/8', NETDIAG_DNS_SERVERS: '127.0.0.1:1' };
    const proxy = await startHttpProxy({ kind: 'elite' });
    const store: Store = await openSqliteStore(path);
    // An API instance that accepts jobs but never listens: it records no judge.
    const app = await composeApp({ config: loadConfig({ ...env, NETDIAG_WORKERS: '0' }), store, logger: false });
    await app.ready();
    t.after(async () => {
      await app.close();
      await store.close();
      await proxy.close();
    });
    const worker = startWorker(t, { ...env, NETDIAG_WORKERS: '2' });
    assert.match(await worker.ready, /no judge: proxy jobs fail \(503\)/);
    const warned = await startWarning(worker);
    assert.match(warned.msg, /NETDIAG_JUDGE_URL/);
    assert.match(warned.msg, /NETDIAG_PUBLIC_URL/);

    const { token } = await new AccountService(store).createAccount({ email: 's@example.com', name: 'S', plan: 'enterprise' });
    const headers = { authorization: `Bearer ${token}` };
    const created = await app.inject({ method: 'POST', url: '/api/proxy/check', headers: { ...headers, prefer: 'respond-async' }, payload: { proxy: proxy.address } });
    assert.equal(created.statusCode, 202, created.body);
    const { id } = (created.json() as Answer<JobView>).data;
    const job = await finished(async () => ((await app.inject({ method: 'GET', url: `/api/jobs/${id}`, headers })).json() as Answer<JobView>).data);
    assertMisconfigured(job, /no judge/);

    // The API instance starts listening: it records its judge, and the running worker uses it.
    await app.listen({ port: 0, host: '127.0.0.1' });
    const again = await app.inject({ method: 'POST', url: '/api/proxy/check', headers: { ...headers, prefer: 'respond-async' }, payload: { proxy: proxy.address, check_speed: false } });
    const next = await finished(async () => ((await app.inject({ method: 'GET', url: `/api/jobs/${(again.json() as Answer<JobView>).data.id}`, headers })).json() as Answer<JobView>).data);
    assert.equal(next.status, 'succeeded', JSON.stringify(next.error));
    assert.equal((next.result as { status: string }).status, 'working');
    assert.equal(await worker.stop(), 0);
  });
});
