import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { test, type TestContext } from 'node:test';
import { Redis } from 'ioredis';
import { EmbeddedJobQueue } from '../../../src/infra/jobs/embedded.js';
import { BullMqJobQueue } from '../../../src/infra/jobs/bullmq.js';
import type { JobQueue, JobRunner } from '../../../src/domain/jobs/queue.js';
import type { JobRecord } from '../../../src/domain/jobs/repository.js';
import { TurnYieldedError } from '../../../src/errors.js';
import { eventually } from '../../helpers/eventually.js';
import { sqliteStoreWithAccount } from '../store/backends.js';

/**
 * Worker capacity shared between accounts for jobs of any length (docs/api.md, "Rate limits"): account
 * A fills every worker with long resumable jobs; account B's job starts at A's next turn check
 * (no timing asserted: the test waits for B's run), A's job that gave its turn is still `running`
 * to the API and claimable, and runs on once B's job ends. Nothing gives its turn while no other
 * account waits, nor once the shares are even. On the embedded queue, and on BullMQ with
 * TEST_REDIS_URL.
 */

const HOUR_MS = 3_600_000;
/** Turn checks this often in the test (JOB_SLICE_MS is 1 s): the test waits on events, not on it. */
const SLICE_MS = 20;
const TEST_REDIS_URL = process.env.TEST_REDIS_URL;

interface Engine {
  name: string;
  skip: string | false;
  queue(repo: Parameters<typeof makeQueue>[0], t: TestContext): JobQueue & { checkTurns?: () => Promise<string | undefined> };
}

function makeQueue(repo: ConstructorParameters<typeof EmbeddedJobQueue>[0]): EmbeddedJobQueue {
  return new EmbeddedJobQueue(repo, { workers: 2, pollMs: HOUR_MS, sliceMs: SLICE_MS });
}

const engines: Engine[] = [
  { name: 'embedded', skip: false, queue: (repo) => makeQueue(repo) },
  {
    name: 'BullMQ',
    skip: TEST_REDIS_URL ? false : 'set TEST_REDIS_URL',
    queue: (repo, t) => {
      const prefix = `netdiag-test:${process.pid}:${randomBytes(4).toString('hex')}`;
      t.after(async () => {
        const redis = new Redis(TEST_REDIS_URL!);
        const keys = await redis.keys(`${prefix}:*`);
        if (keys.length > 0) await redis.del(...keys);
        redis.disconnect();
      });
      return new BullMqJobQueue({ redisUrl: TEST_REDIS_URL!, repo, workers: 2, prefix, sliceMs: SLICE_MS });
    },
  },
];

for (const engine of engines) {
  test(`${engine.name}: an account holding every worker gives a turn to another account's waiting job, and its job goes on after`, { skip: engine.skip, timeout: 60_000 }, async (t) => {
    const { store, account: a } = await sqliteStoreWithAccount(t);
    const b = await store.accounts.create({ name: 'b', email: 'b@example.com', plan: 'pro', created_at: new Date().toISOString() });
    const started: string[] = [];
    const yielded: string[] = [];
    const ends = new Map<string, () => void>();
    const runner: JobRunner = {
      admit: async () => () => undefined,
      resumable: () => true,
      // A long job: it runs until it is ended, or until it is aborted (it then stops at once).
      run: (job: JobRecord, _holder, signal) => {
        started.push(job.id);
        return new Promise<void>((resolve) => {
          ends.set(job.id, resolve);
          signal.addEventListener('abort', () => {
            if (signal.reason instanceof TurnYieldedError) yielded.push(job.id);
            resolve();
          }, { once: true });
        });
      },
    };
    const queue = engine.queue(store.jobs, t);
    t.after(async () => {
      for (const end of ends.values()) end();
      await queue.close();
    });
    let n = 0;
    const create = async (accountId: number) => {
      const id = `job_${String(++n).padStart(24, '0')}`;
      await store.jobs.create({ id, account_id: accountId, endpoint: '/port/scan-range', body: '{}', webhook_url: null, progress_total: 1, created_at: new Date(Date.now() + n).toISOString() });
      await queue.enqueue(id);
      return id;
    };
    const status = async (id: string) => (await store.jobs.find(id))!.status;
    const finish = async (id: string) => {
      // As a run's end does: the job's outcome, then its run returns.
      const row = (await store.jobs.find(id))!;
      await store.jobs.finish(id, row.lease_owner!, { status: 'succeeded', result: '[]', error: null, finished_at: new Date().toISOString(), progress_done: 1 });
      ends.get(id)!();
    };

    queue.start(runner);
    const [a1, a2, a3] = [await create(a.id), await create(a.id), await create(a.id)];
    await eventually(() => started.length === 2, { what: "A's first two jobs hold both workers" });
    assert.deepEqual(started, [a1, a2]);
    // Only A waits: its own backlog takes no turn from it.
    if (queue.checkTurns) assert.equal(await queue.checkTurns(), undefined);
    assert.deepEqual(yielded, []);

    const b1 = await create(b.id);
    await eventually(() => started.includes(b1), { what: "B's job started", timeoutMs: 30_000 });
    assert.equal(yielded.length, 1, 'one of A\'s jobs gave its turn');
    const gave = yielded[0]!;
    assert.ok([a1, a2].includes(gave));
    const row = (await store.jobs.find(gave))!;
    assert.deepEqual([row.status, row.lease_owner], ['running', null], 'still running to the API, claimable');
    assert.equal(await status(a3), 'queued');
    // Shares even (one each): nobody gives a turn again.
    if (queue.checkTurns) assert.equal(await queue.checkTurns(), undefined);

    // B's job ends: A's job that gave its turn goes on (it is A's oldest waiting).
    await finish(b1);
    await eventually(() => started.filter((id) => id === gave).length === 2, { what: 'the job that gave its turn runs again', timeoutMs: 30_000 });
    assert.equal(await status(gave), 'running');
    assert.equal(await status(a3), 'queued');
    assert.equal(yielded.length, 1);
  });
}
