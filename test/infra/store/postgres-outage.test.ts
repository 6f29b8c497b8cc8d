import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { promisify } from 'node:util';
import pg from 'pg';
import { join } from 'node:path';
import { performance } from 'node:perf_hooks';
import { test } from 'node:test';
import { tempDir } from '../../helpers/build.js';
import { PrivateCluster, findPgCtl } from '../../helpers/pg-cluster.js';
import { serve } from '../../helpers/serve.js';
import { TEST_DATABASE_URL } from './backends.js';
import { eventually } from '../../helpers/eventually.js';

/** The hang the old code showed; a refusal must come well before it. */
const HANG_MS = 2_000;
/**
 * How long the test waits for the server to answer 200s again once PostgreSQL is back (and for
 * the usage to catch up) before it fails: a give-up for a busy machine, not a figure.
 */
const RECOVERY_DEADLINE_MS = 30_000;
/** Requests sent at once, without pause, while PostgreSQL stops and starts. */
const LOAD_WORKERS = 2;

const bin = new URL('../../../bin/netdiag.js', import.meta.url).pathname;

const server = findPgCtl();
if (!TEST_DATABASE_URL) {
  test('PostgreSQL outage: skipped because TEST_DATABASE_URL is unset (.ci/run sets it)', { skip: 'TEST_DATABASE_URL is unset' }, () => {});
} else if ('missing' in server) {
  test('PostgreSQL outage: skipped because the PostgreSQL server binaries are missing', { skip: server.missing }, () => {});
} else {
  const pgCtl = server.pgCtl;
  test('PostgreSQL outage: `netdiag serve` outlives stops (fast and immediate), answers 503 + Retry-After at once, recovers by itself, and records every answered request', { timeout: 120_000 }, async (t) => {
    const cluster = await PrivateCluster.create(pgCtl);
    t.after(() => cluster.destroy());
    const served = await serve(join(tempDir(t), 'unused.db'), true, { DATABASE_URL: cluster.url });
    t.after(async () => {
      if (served.child.exitCode === null) {
        served.child.kill('SIGTERM');
        await served.exited;
      }
    });
    const base = `http://127.0.0.1:${served.port}`;
    // The load spends the first account's minute; the checks use an account of their own, made
    // with the CLI, so that a 200 (not a 429) says the server is back.
    const { stdout } = await promisify(execFile)(process.execPath, [bin, 'account', 'create', '--email', 'probe@example.com', '--name', 'Probe', '--plan', 'enterprise'], {
      env: { ...process.env, DATABASE_URL: cluster.url },
    });
    const loadAuth = `Bearer ${served.token}`;
    const probeAuth = `Bearer ${(JSON.parse(stdout) as { token: string }).token}`;

    /** Responses that were answered (anything but a 503): each one must be in the usage table. */
    let answered = 0;
    const statuses = new Map<number, number>();
    let slowestRefusal = 0;
    const call = async (path: string, authorization = probeAuth): Promise<Response> => {
      const started = performance.now();
      const res = await fetch(base + path, { headers: { authorization } });
      await res.arrayBuffer();
      statuses.set(res.status, (statuses.get(res.status) ?? 0) + 1);
      if (res.status === 503) {
        slowestRefusal = Math.max(slowestRefusal, performance.now() - started);
        assert.equal(res.headers.get('retry-after'), '1');
      } else answered++;
      return res;
    };
    const alive = () => served.child.exitCode === null && served.child.signalCode === null;
    /** Responses received so far, of any status. */
    const calls = () => [...statuses.values()].reduce((a, b) => a + b, 0);
    /** Waits until `n` more responses have come: traffic that went through whatever happens meanwhile. */
    const moreCalls = async (n: number, what: string) => {
      const seen = calls();
      await eventually(() => calls() >= seen + n, { timeoutMs: RECOVERY_DEADLINE_MS, what });
    };

    for (const mode of ['fast', 'immediate'] as const) {
      await eventually(async () => (await call('/api/user')).status === 200, { timeoutMs: RECOVERY_DEADLINE_MS, intervalMs: 50, what: `200 before the ${mode} stop` });
      // Traffic runs through the stop and the start: requests answered as the database goes
      // away have their usage written later, not lost.
      let loading = true;
      const load = Array.from({ length: LOAD_WORKERS }, async (_, w) => {
        for (let i = 0; loading; i++) await call(i % 5 === w ? '/api/nope' : '/api/user', loadAuth);
      });
      await moreCalls(10, `traffic under way before the ${mode} stop`);
      await cluster.stop(mode);

      await eventually(async () => (await fetch(`${base}/readyz`)).status === 503, { timeoutMs: HANG_MS, intervalMs: 50, what: `/readyz 503 after the ${mode} stop` });
      for (let i = 0; i < 5; i++) {
        const started = performance.now();
        const res = await call('/api/user');
        assert.equal(res.status, 503, `while PostgreSQL is stopped (${mode})`);
        assert.ok(performance.now() - started < HANG_MS / 2, `a 503 is answered well before the ${HANG_MS} ms hang`);
        if (i === 0) {
          const body = await (await fetch(`${base}/api/user`, { headers: { authorization: probeAuth } })).json();
          assert.equal(body.success, false);
          assert.equal(body.error, 'service_unavailable');
          assert.deepEqual(body.details, { retry_after_s: 1 });
        }
        const ready = await fetch(`${base}/readyz`);
        assert.equal(ready.status, 503);
        assert.equal((await ready.json()).database, 'unreachable');
      }
      await moreCalls(20, `twenty more answers while PostgreSQL is stopped (${mode})`);
      assert.ok(alive(), `the server is alive after a ${mode} stop`);

      await cluster.start();
      await eventually(async () => (await call('/api/user')).status === 200, { timeoutMs: RECOVERY_DEADLINE_MS, intervalMs: 50, what: `200 again after the ${mode} stop` });
      assert.equal((await fetch(`${base}/readyz`)).status, 200);
      loading = false;
      await Promise.all(load);
      assert.ok(alive(), `the server is alive after PostgreSQL came back (${mode})`);
    }

    assert.ok(slowestRefusal < HANG_MS, `every 503 came before the ${HANG_MS} ms hang (slowest ${Math.round(slowestRefusal)} ms)`);
    assert.equal(statuses.get(500), undefined, `no internal errors: ${JSON.stringify([...statuses])}`);
    t.diagnostic(`statuses: ${JSON.stringify(Object.fromEntries(statuses))}`);

    // Records kept during the outage are written once the database is back: the usage table
    // catches up with every answered request (429s included), and never counts one twice.
    const db = new pg.Client({ connectionString: cluster.url });
    db.on('error', () => {}); // the cluster is removed when the test ends
    await db.connect();
    let recorded = -1;
    await eventually(async () => {
      recorded = Number((await db.query<{ n: string }>('select coalesce(sum(requests), 0) as n from usage_daily')).rows[0]!.n);
      assert.ok(recorded <= answered, `recorded ${recorded} of ${answered} answered: none twice`);
      return recorded === answered;
    }, { timeoutMs: RECOVERY_DEADLINE_MS, intervalMs: 50, what: `usage equal to the ${answered} answered requests` });
    const kept = served.stdout().split('\n').filter((line) => line.includes('usage records could not be written')).length;
    t.diagnostic(`${recorded} requests recorded; usage writes failed and were kept in ${kept} outage(s)`);
    const logged = served.stdout().split('\n').filter((line) => line.includes('requests that need it are answered 503')).length;
    assert.ok(logged >= 1 && logged <= 2, `the outages are in the log once, not once per 503 (${logged} lines)`);

    // A graceful shutdown does not hang on a database that is gone.
    await db.end();
    await cluster.stop('immediate');
    assert.equal((await call('/api/user')).status, 503);
    served.child.kill('SIGTERM');
    assert.equal(await served.exited, 0, 'SIGTERM while PostgreSQL is down: a clean exit, not the forced one');
  });
}
