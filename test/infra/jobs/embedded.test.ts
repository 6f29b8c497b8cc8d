import assert from 'node:assert/strict';
import { test, type TestContext } from 'node:test';
import { EmbeddedJobQueue } from '../../../src/infra/jobs/embedded.js';
import type { JobRunner } from '../../../src/domain/jobs/queue.js';
import type { JobRecord } from '../../../src/domain/jobs/repository.js';
import type { Store } from '../../../src/domain/store.js';
import { eventually } from '../../helpers/eventually.js';
import { sqliteStoreWithAccount } from '../store/backends.js';

/**
 * The embedded queue on a real SQLite store, with a runner whose runs end on cue, and no poll (an
 * hour): whatever starts a job here is the queue's own kicks, not the poll's next look.
 */

const HOUR_MS = 3_600_000;
const turns = async (n = 20) => {
  for (let i = 0; i < n; i++) await new Promise((r) => setImmediate(r));
};

async function setup(t: TestContext) {
  const { store, account } = await sqliteStoreWithAccount(t);
  let looks = 0;
  const repo = {
    ...store.jobs,
    claimable: (...args: Parameters<Store['jobs']['claimable']>) => {
      looks++;
      return store.jobs.claimable(...args);
    },
  };
  const started: string[] = [];
  const ends = new Map<string, () => void>();
  const runner: JobRunner = {
    admit: async () => () => undefined,
    run: (job: JobRecord) => {
      started.push(job.id);
      return new Promise<void>((resolve) => ends.set(job.id, resolve));
    },
  };
  let n = 0;
  const create = async () => {
    const id = `job_${String(++n).padStart(24, '0')}`;
    await store.jobs.create({ id, account_id: account.id, endpoint: '/port/scan', body: '{}', webhook_url: null, progress_total: 1, created_at: new Date(Date.now() + n).toISOString() });
    return id;
  };
  const queue = new EmbeddedJobQueue(repo, { workers: 1, pollMs: HOUR_MS });
  t.after(async () => {
    for (const end of ends.values()) end();
    await queue.close();
  });
  return { queue, runner, create, started, end: (id: string) => ends.get(id)!(), looks: () => looks };
}

test('one worker: jobs left behind start one after another as runs end; a run that left nothing behind makes no look', async (t) => {
  const q = await setup(t);
  const [a, b, c] = [await q.create(), await q.create(), await q.create()];
  q.queue.start(q.runner);
  await eventually(() => q.started.length === 1);
  assert.deepEqual(q.started, [a]);
  q.end(a);
  await eventually(() => q.started.length === 2);
  q.end(b);
  await eventually(() => q.started.length === 3);
  assert.deepEqual(q.started, [a, b, c], 'oldest first, each when the one before ended');
  // The look that started c saw c alone: its end needs no look (new jobs kick their own).
  const looks = q.looks();
  q.end(c);
  await turns();
  assert.equal(q.looks(), looks);
  const d = await q.create();
  await q.queue.enqueue(d);
  await eventually(() => q.started.length === 4);
  assert.equal(q.started[3], d);
});

test("a new job starts once its creating request's answer is out, not before", async (t) => {
  const q = await setup(t);
  q.queue.start(q.runner);
  await eventually(() => q.looks() === 1, { what: "the start's look" });
  const id = await q.create();
  // Timers set from here are node's mock: one that would start the job runs when the test moves
  // time, at once, rather than after a wait.
  t.mock.timers.enable({ apis: ['setTimeout'] });
  let answer!: () => void;
  await q.queue.enqueue(id, new Promise<void>((resolve) => (answer = resolve)));
  await turns();
  // A minute on: any timer short of the hour's poll has run. A look would be counted as it begins.
  t.mock.timers.tick(60_000);
  await turns();
  assert.equal(q.looks(), 1, 'no look while answering');
  assert.deepEqual(q.started, [], 'still answering');
  t.mock.timers.reset();
  answer();
  await eventually(() => q.started.length === 1);
  assert.deepEqual(q.started, [id]);
});
