import assert from 'node:assert/strict';
import { test, type TestContext } from 'node:test';
import { RESULT_IS_ITEMS, type JobOperation } from '../../../src/domain/jobs/service.js';
import { itemsOf } from '../../../src/domain/jobs/items.js';
import { LeaseLostError, TurnYieldedError } from '../../../src/errors.js';
import type { Store } from '../../../src/domain/store.js';
import { sqliteStoreWithAccount } from '../../infra/store/backends.js';
import { eventually } from '../../helpers/eventually.js';
import { jobServiceFor } from './service-harness.js';

/**
 * A job run again goes on from where it was (docs/api.md, "Rate limits"; docs/jobs.md): JobService.run
 * on a real SQLite store with an operation of the test's own that counts how often each item is
 * "probed". A run stopped by a lost lease, or giving its turn back, and then run again, leaves
 * every item stored exactly once, in seqs 1..N without a gap, and probes no stored item again.
 */

const N = 60;

/** An operation of N items that stops (until aborted) once `pauseAfter` items were probed in a run, when set. */
function countingOp() {
  const probes = new Array<number>(N).fill(0);
  const state = { pauseAfter: undefined as number | undefined, paused: false };
  const op: JobOperation = {
    items: () => N,
    skipsDone: true,
    async run(_body, ctx) {
      let probed = 0;
      for (let i = 0; i < N; i++) {
        if (ctx.done?.has(i)) continue;
        if (state.pauseAfter !== undefined && probed === state.pauseAfter) {
          state.paused = true;
          // Probes in flight as the run stops: never completed, never reported.
          await new Promise((_resolve, reject) => ctx.signal.addEventListener('abort', () => reject(ctx.signal.reason as Error), { once: true }));
        }
        probes[i]!++;
        probed++;
        ctx.onItem!(i, () => JSON.stringify({ i }));
        // Items complete a few at a time, as a scan's do.
        if (i % 7 === 0) await new Promise((r) => setImmediate(r));
      }
      return RESULT_IS_ITEMS;
    },
  };
  return { op, probes, state };
}

const service = jobServiceFor;

async function setup(t: TestContext) {
  const { store, account } = await sqliteStoreWithAccount(t);
  const counting = countingOp();
  const jobs = service(store, counting.op);
  const view = await jobs.create({ accountId: account.id, endpoint: '/x/range', body: {}, webhookUrl: null, total: N });
  return { store, jobs, id: view.id, ...counting };
}

/** Every stored item exactly once, seqs 1..N in order, and each item probed exactly once. */
async function assertEachOnce(store: Store, id: string, probes: number[]): Promise<void> {
  const items = itemsOf(await store.jobs.itemBatches(id, 0, 10_000));
  assert.deepEqual(items.map((it) => it.seq), Array.from({ length: N }, (_, i) => i + 1), 'seqs 1..N without a gap');
  assert.deepEqual(items.map((it) => it.index).sort((a, b) => a - b), Array.from({ length: N }, (_, i) => i), 'each index once');
  assert.deepEqual(probes, new Array<number>(N).fill(1), 'no stored item probed again');
  const row = (await store.jobs.find(id))!;
  assert.deepEqual([row.status, row.progress_done], ['succeeded', N]);
  assert.equal(row.result, null, 'its result is its items');
}

test('a run whose lease was lost, taken over by another process, goes on from the items it had stored', async (t) => {
  const { store, jobs, id, probes, state } = await setup(t);
  state.pauseAfter = 25;
  const now = Date.now();
  const first = (await store.jobs.claim(id, 'p1', now, now + 30_000, new Date(now).toISOString()))!;
  const abort = new AbortController();
  const run = jobs.run(first, 'p1', abort.signal);
  // Its 25 items are written, then it stalls; its lease lapses and another process takes the job.
  await eventually(async () => state.paused && (await store.jobs.find(id))!.progress_done === 25, { what: 'the first run stalled with 25 items stored' });
  const later = now + 60_000;
  const second = (await store.jobs.claim(id, 'p2', later, later + 30_000, new Date(later).toISOString()))!;
  assert.equal(second.progress_done, 25, 'its progress kept');
  abort.abort(new LeaseLostError());
  await run;
  state.pauseAfter = undefined;
  // Another process: nothing of the first run kept in memory, all read back from the database.
  await service(store, countingOpOf(probes)).run(second, 'p2', new AbortController().signal);
  await assertEachOnce(store, id, probes);
});

/** The same counting operation over the same counts, for another JobService (another process). */
function countingOpOf(probes: number[]): JobOperation {
  return {
    items: () => N,
    async run(_body, ctx) {
      for (let i = 0; i < N; i++) {
        if (ctx.done?.has(i)) continue;
        probes[i]!++;
        ctx.onItem!(i, () => JSON.stringify({ i }));
      }
      return RESULT_IS_ITEMS;
    },
  };
}

for (const where of ['this process', 'another process'] as const) {
  test(`a run that gives its turn back keeps what completed, and its next run (in ${where}) probes only the rest`, async (t) => {
    const { store, jobs, id, probes, state } = await setup(t);
    state.pauseAfter = 40;
    const now = Date.now();
    const first = (await store.jobs.claim(id, 'p1', now, now + 30_000, new Date(now).toISOString()))!;
    const abort = new AbortController();
    const run = jobs.run(first, 'p1', abort.signal);
    await eventually(() => state.paused, { what: 'the first run reached its 40th item' });
    // Given back at once: the items completed since the last write are written as the run stops.
    abort.abort(new TurnYieldedError());
    await run;
    assert.equal((await store.jobs.find(id))!.progress_done, 40);
    assert.equal(await store.jobs.yieldTurn(id, 'p1'), true);
    state.pauseAfter = undefined;
    const again = (await store.jobs.claim(id, 'p1', now + 1, now + 30_000, new Date(now).toISOString()))!;
    const runner = where === 'this process' ? jobs : service(store, countingOpOf(probes));
    await runner.run(again, 'p1', new AbortController().signal);
    await assertEachOnce(store, id, probes);
  });
}

test('only a call that skips its stored items may give its turn back', async (t) => {
  const { store, jobs, id, op } = await setup(t);
  const row = (await store.jobs.find(id))!;
  assert.equal(jobs.resumable(row), true);
  assert.equal(service(store, { ...op, skipsDone: false }).resumable(row), false, 'a bulk call that would check its entries again');
  assert.equal(service(store, { ...op, items: undefined }).resumable(row), false, 'a call with one answer');
});
