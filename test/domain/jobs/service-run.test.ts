import assert from 'node:assert/strict';
import { test, type TestContext } from 'node:test';
import type { JobOperation } from '../../../src/domain/jobs/service.js';
import { sqliteStoreWithAccount } from '../../infra/store/backends.js';
import { eventually } from '../../helpers/eventually.js';
import { errorBody, jobServiceFor } from './service-harness.js';

/**
 * JobService.run on a real SQLite store, with an operation of the test's own: what a run leaves
 * in the database when an item cannot be written as JSON (the answer's serializer refuses it).
 */


async function setup(t: TestContext, op: JobOperation) {
  const { store, account } = await sqliteStoreWithAccount(t);
  const jobs = jobServiceFor(store, op);
  const view = await jobs.create({ accountId: account.id, endpoint: '/x/range', body: {}, webhookUrl: null, total: 3 });
  const now = Date.now();
  const job = (await store.jobs.claim(view.id, 'me', now, now + 60_000, new Date(now).toISOString()))!;
  return { store, jobs, job };
}

test('an item its serializer refuses fails the job with the error body (as the synchronous call answers 500), instead of leaving it running to be run again', async (t) => {
  // The store and job, once set up: the run waits on the store for the first write.
  const ran: { store?: Awaited<ReturnType<typeof setup>>['store']; jobId?: string } = {};
  const op: JobOperation = {
    items: () => 3,
    async run(_body, ctx) {
      ctx.onItem!(0, () => '{"n":0}');
      // The first write goes alone: the next items complete after it.
      await eventually(async () => (await ran.store!.jobs.find(ran.jobId!))!.progress_done === 1, { what: 'the first item written' });
      ctx.onItem!(1, () => {
        throw new Error('"port" is required!');
      });
      ctx.onItem!(2, () => '{"n":2}');
      return '[]';
    },
  };
  const { store, jobs, job } = await setup(t, op);
  Object.assign(ran, { store, jobId: job.id });
  await jobs.run(job, 'me', new AbortController().signal);
  const row = (await store.jobs.find(job.id))!;
  assert.equal(row.status, 'failed');
  assert.equal(row.lease_owner, null);
  assert.deepEqual(JSON.parse(row.error!), errorBody(new Error('"port" is required!')));
  // What was written before stays, and the progress says so.
  assert.equal(row.progress_done, 1);
  assert.deepEqual((await jobs.view(row)).result, [{ n: 0 }]);
});
