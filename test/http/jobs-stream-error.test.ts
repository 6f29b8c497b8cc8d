import assert from 'node:assert/strict';
import { join } from 'node:path';
import { test, type TestContext } from 'node:test';
import { composeApp } from '../../src/compose-app.js';
import { loadConfig } from '../../src/config.js';
import { AccountService } from '../../src/domain/accounts/service.js';
import { batchOf } from '../../src/domain/jobs/items.js';
import { newJobId } from '../../src/domain/jobs/service.js';
import type { JobView } from '../../src/domain/jobs/types.js';
import { DATABASE_RETRY_AFTER_S, DATABASE_UNAVAILABLE_MESSAGE } from '../../src/error-answers.js';
import { openSqliteStore } from '../../src/infra/store/sqlite.js';
import type { Store } from '../../src/domain/store.js';
import { tempDir } from '../helpers/build.js';
import { DatabaseUnavailableError } from '../../src/errors.js';
import { checkResponses } from '../helpers/contract.js';

/**
 * A job's stream cut by the database going away: it ends with a last line saying so, the error
 * body a request would get then (docs/jobs.md: 503 service_unavailable), and the response ends
 * cleanly. SQLite never goes away by itself: a wrapper of its job store fails on cue. And, on the
 * same job, a finished job's stream resumed mid-way still ends with its whole result.
 */

const UNAVAILABLE = {
  success: false,
  error: 'service_unavailable',
  message: DATABASE_UNAVAILABLE_MESSAGE,
  details: { retry_after_s: DATABASE_RETRY_AFTER_S },
};

interface Running {
  url: string;
  token: string;
  jobId: string;
  /** From now on, the stream's reads of the two stored batches answer and every later read of the job fails as an unreachable database does. */
  failAfterTheItems(): void;
  /** Ends the job (its holder finishes it). */
  finish(): Promise<void>;
}

const ITEMS = [
  { host: '127.0.0.1', ip: '127.0.0.1', port: 1, open: false, state: 'closed', service: 'tcpmux', response_time: 0.1, queued_ms: 0, reason: 'connection refused' },
  { host: '127.0.0.1', ip: '127.0.0.1', port: 2, open: false, state: 'closed', service: null, response_time: 0.1, queued_ms: 0, reason: 'connection refused' },
];

/**
 * An app whose job store can be told to fail, with a two-port scan job in it that another process
 * holds (its lease is live, so this one leaves it alone): running, both items written. A stream
 * of it reads the items, then waits and reads the job again, which is where the failure comes.
 */
async function start(t: TestContext): Promise<Running> {
  const real = await openSqliteStore(join(tempDir(t), 'netdiag.db'));
  let readsLeft = Infinity;
  const failing = () => {
    if (readsLeft-- <= 0) throw new DatabaseUnavailableError(Object.assign(new Error('connect ECONNREFUSED 127.0.0.1:5432'), { code: 'ECONNREFUSED' }));
  };
  const store: Store = {
    ...real,
    jobs: {
      ...real.jobs,
      async itemBatches(jobId, afterSeq, limit) {
        failing();
        return real.jobs.itemBatches(jobId, afterSeq, limit);
      },
      async find(id) {
        // The route's and the stream's first look at the job answer; the failure is for what follows.
        if (readsLeft !== Infinity && readsLeft <= 0) failing();
        return real.jobs.find(id);
      },
    },
  };
  const { token, account } = await new AccountService(store).createAccount({ email: 'a@example.com', name: 'A', plan: 'enterprise' });
  const config = loadConfig({ DATABASE_URL: 'sqlite::memory:', NETDIAG_DNS_SERVERS: '127.0.0.1:1', NETDIAG_ALLOW_TARGETS: '127.0.0.0/8' });
  const app = await composeApp({ config, store, logger: false });
  checkResponses(t, app);
  t.after(async () => {
    await app.close();
    await real.close();
  });
  await app.listen({ port: 0, host: '127.0.0.1' });
  const url = `http://127.0.0.1:${(app.server.address() as { port: number }).port}`;
  const jobId = newJobId();
  const now = Date.now();
  const at = new Date(now).toISOString();
  await real.jobs.create({ id: jobId, account_id: account.id, endpoint: '/port/scan-range', body: '{"host":"127.0.0.1","ports":"1-2"}', webhook_url: null, progress_total: 2, created_at: at });
  assert.ok(await real.jobs.claim(jobId, 'elsewhere', now, now + 60_000, at));
  // Two writes, a batch each, as a run writes items that complete apart.
  for (const [i, item] of ITEMS.entries()) assert.ok(await real.jobs.addItems(jobId, 'elsewhere', batchOf([{ seq: i + 1, index: i, item: JSON.stringify(item) }]), i + 1));
  return {
    url,
    token,
    jobId,
    // A stream reads one stored batch at a time (STREAM_READ_BATCHES): the two items are two reads.
    failAfterTheItems: () => (readsLeft = ITEMS.length),
    finish: async () => {
      // Its result is exactly its items: kept once, with them (result null), as JobService.run keeps it.
      const outcome = { status: 'succeeded' as const, result: null, error: null, finished_at: new Date().toISOString(), progress_done: 2 };
      assert.ok(await real.jobs.finish(jobId, 'elsewhere', outcome));
    },
  };
}

test('NDJSON: the database failing mid-stream ends it with an {"error": ...} line, the 503 body, and the response ends', async (t) => {
  const s = await start(t);
  s.failAfterTheItems();
  const res = await fetch(`${s.url}/api/jobs/${s.jobId}`, { headers: { authorization: `Bearer ${s.token}`, accept: 'application/x-ndjson' } });
  assert.equal(res.status, 200);
  // text() rejects when the connection is cut instead of the response ending.
  const lines = (await res.text()).split('\n');
  assert.equal(lines.pop(), '', 'the last line is complete');
  assert.deepEqual(lines.slice(0, -1).map((l) => (JSON.parse(l) as { seq: number }).seq), [1, 2], 'the items read before the failure');
  assert.deepEqual(JSON.parse(lines.at(-1)!), { error: UNAVAILABLE });
});

test('SSE: the same, as an error event after the items', async (t) => {
  const s = await start(t);
  s.failAfterTheItems();
  const res = await fetch(`${s.url}/api/jobs/${s.jobId}`, { headers: { authorization: `Bearer ${s.token}`, accept: 'text/event-stream' } });
  assert.equal(res.status, 200);
  const events = (await res.text()).split('\n\n');
  assert.equal(events.pop(), '', 'the last event is complete');
  assert.deepEqual(
    events.map((e) => /^event: (\w+)$/m.exec(e)?.[1] ?? e),
    ['retry: 1000', 'item', 'item', 'error'],
  );
  assert.equal(events.at(-1), `event: error\ndata: ${JSON.stringify({ error: UNAVAILABLE })}`);
});

test('without a failure the stream still ends with the finished job (the wrapper itself changes nothing)', async (t) => {
  const s = await start(t);
  await s.finish();
  const res = await fetch(`${s.url}/api/jobs/${s.jobId}`, { headers: { authorization: `Bearer ${s.token}`, accept: 'application/x-ndjson' } });
  const lines = (await res.text()).trim().split('\n').map((l) => JSON.parse(l) as Record<string, unknown>);
  assert.equal(lines.length, 3);
  assert.equal((lines.at(-1) as unknown as JobView).status, 'succeeded');
});

test('a finished job streamed from the middle of its items ends with the whole job: every item in its result', async (t) => {
  const s = await start(t);
  await s.finish();
  const res = await fetch(`${s.url}/api/jobs/${s.jobId}`, { headers: { authorization: `Bearer ${s.token}`, accept: 'text/event-stream', 'last-event-id': '1' } });
  const events = (await res.text()).split('\n\n');
  assert.deepEqual(events.filter((e) => e.includes('event: item')).map((e) => /^id: (\d+)$/m.exec(e)?.[1]), ['2'], 'only the items after the id');
  const job = JSON.parse(/^data: (.*)$/m.exec(events.find((e) => e.includes('event: job'))!)![1]!) as JobView;
  assert.equal(job.status, 'succeeded');
  assert.deepEqual(job.result, ITEMS);
});
