import assert from 'node:assert/strict';
import { test } from 'node:test';
import { batchOf, itemsOf } from '../../../src/domain/jobs/items.js';
import type { Store } from '../../../src/domain/store.js';
import type { Backend } from './backends.js';

/** The jobs part of the store contract, run against every backend. */
export function jobsStoreSuite(make: () => Backend): void {
  const name = make().name;
  const at = (s: number) => new Date(Date.UTC(2026, 2, 1, 10, 0, s)).toISOString();

  const opened = async (t: { after: (fn: () => Promise<void>) => void }) => {
    const backend = make();
    const store = await backend.open();
    t.after(async () => {
      await store.close();
      await backend.drop();
    });
    return Object.assign(store, { reopen: () => backend.open() });
  };
  const account = (store: Store, email: string, plan = 'free') => store.accounts.create({ name: email, email, plan, created_at: at(0) });
  const job = (store: Store, id: string, accountId: number, s: number) =>
    store.jobs.create({ id, account_id: accountId, endpoint: '/port/scan-range', body: '{"host":"x"}', webhook_url: null, progress_total: 3, created_at: at(s) });

  test(`${name} store: jobs are listed newest first per account, by status, with a keyset cursor`, async (t) => {
    const store = await opened(t);
    const a = await account(store, 'a@example.com');
    const b = await account(store, 'b@example.com');
    const created = await job(store, 'job_a1', a.id, 1);
    assert.equal(created.status, 'queued');
    assert.equal(created.progress_total, 3);
    assert.equal(created.attempts, 0);
    await job(store, 'job_a2', a.id, 2);
    await job(store, 'job_a3', a.id, 2);
    await job(store, 'job_b1', b.id, 3);
    const all = await store.jobs.list(a.id, { limit: 10 });
    assert.deepEqual(all.map((j) => j.id), ['job_a3', 'job_a2', 'job_a1']);
    const page = await store.jobs.list(a.id, { limit: 10, before: { created_at: at(2), id: 'job_a3' } });
    assert.deepEqual(page.map((j) => j.id), ['job_a2', 'job_a1']);
    assert.equal(await store.jobs.cancel('job_a2', a.id, at(5)), true);
    assert.deepEqual((await store.jobs.list(a.id, { limit: 10, status: 'cancelled' })).map((j) => j.id), ['job_a2']);
    assert.equal(await store.jobs.cancel('job_a2', a.id, at(5)), false, 'cancelled once');
    assert.equal(await store.jobs.cancel('job_b1', a.id, at(5)), false, "another account's job");
  });

  test(`${name} store: claimable jobs are the oldest first, at most perAccount of one account, so a backlog hides no other account's job`, async (t) => {
    const store = await opened(t);
    const a = await account(store, 'a@example.com', 'pro');
    const b = await account(store, 'b@example.com');
    for (let i = 1; i <= 4; i++) await job(store, `job_a${i}`, a.id, i);
    await job(store, 'job_b1', b.id, 9);
    const now = Date.parse(at(10));
    // Round-robin between accounts (docs/api.md, "Rate limits"): b's one job comes after a's first, not after a's backlog.
    assert.deepEqual((await store.jobs.claimable(now, 10)).map((c) => c.id), ['job_a1', 'job_b1', 'job_a2', 'job_a3', 'job_a4']);
    assert.deepEqual((await store.jobs.claimable(now, 10, 2)).map((c) => c.id), ['job_a1', 'job_b1', 'job_a2']);
    assert.deepEqual((await store.jobs.claimable(now, 3, 2)).map((c) => c.id), ['job_a1', 'job_b1', 'job_a2']);
    assert.deepEqual(await store.jobs.claimable(now, 1, 2), [{ id: 'job_a1', account_id: a.id, plan: 'pro' }]);
  });

  test(`${name} store: claimable jobs go round-robin between accounts: an account with jobs running goes after one with none, then the one served longest ago`, async (t) => {
    const store = await opened(t);
    const a = await account(store, 'a@example.com', 'pro');
    const b = await account(store, 'b@example.com', 'pro');
    const c = await account(store, 'c@example.com', 'pro');
    for (let i = 1; i <= 3; i++) await job(store, `job_a${i}`, a.id, i);
    await job(store, 'job_b1', b.id, 4);
    await job(store, 'job_b2', b.id, 5);
    await job(store, 'job_c1', c.id, 9);
    const now = Date.parse(at(10));
    assert.ok(await store.jobs.claim('job_a1', 'p1', now, now + 30_000, at(10)));
    // a runs one: its queued ones rank after b's and c's first; b never ran one, so b2 before a2.
    assert.deepEqual((await store.jobs.claimable(now, 10)).map((x) => x.id), ['job_b1', 'job_c1', 'job_b2', 'job_a2', 'job_a3']);
    // a's run ends, b's first starts: a (nothing running, served longest ago) comes before b, then c's.
    assert.ok(await store.jobs.finish('job_a1', 'p1', { status: 'succeeded', result: '1', error: null, finished_at: at(11), progress_done: 1 }));
    assert.ok(await store.jobs.claim('job_b1', 'p1', now, now + 30_000, at(12)));
    assert.deepEqual((await store.jobs.claimable(now, 10)).map((x) => x.id), ['job_c1', 'job_a2', 'job_a3', 'job_b2']);
    // A running job whose lease lapsed is claimable again and no longer counts as running.
    assert.deepEqual((await store.jobs.claimable(now + 60_000, 10)).map((x) => x.id), ['job_c1', 'job_a2', 'job_b1', 'job_a3', 'job_b2']);
  });

  test(`${name} store: a suspended account's jobs are cancelled at once with the error given, and none of its jobs is claimable or claimed`, async (t) => {
    const store = await opened(t);
    const a = await account(store, 'a@example.com', 'pro');
    const b = await account(store, 'b@example.com', 'pro');
    await job(store, 'job_a1', a.id, 1);
    await job(store, 'job_a2', a.id, 2);
    await job(store, 'job_a3', a.id, 3);
    await job(store, 'job_b1', b.id, 4);
    const now = Date.parse(at(10));
    assert.ok(await store.jobs.claim('job_a1', 'p1', now, now + 30_000, at(10)));
    assert.ok(await store.jobs.finish('job_a1', 'p1', { status: 'succeeded', result: '1', error: null, finished_at: at(11), progress_done: 1 }));
    assert.ok(await store.jobs.claim('job_a2', 'p1', now, now + 30_000, at(10)));
    await store.accounts.update(a.id, { status: 'suspended' });
    // Queued since the suspension (a request that was under way): never claimed while suspended.
    await job(store, 'job_a4', a.id, 5);
    assert.deepEqual((await store.jobs.claimable(now, 10)).map((x) => x.id), ['job_b1']);
    assert.equal(await store.jobs.claim('job_a4', 'p2', now, now + 30_000, at(12)), undefined);
    const error = JSON.stringify({ success: false, error: 'forbidden', message: 'suspended' });
    assert.deepEqual((await store.jobs.cancelAccount(a.id, at(20), error)).sort(), ['job_a2', 'job_a3', 'job_a4']);
    for (const id of ['job_a2', 'job_a3', 'job_a4']) {
      const row = (await store.jobs.find(id))!;
      assert.deepEqual([row.status, row.error, row.finished_at, row.lease_owner], ['cancelled', error, at(20), null], id);
    }
    assert.equal((await store.jobs.find('job_a1'))!.status, 'succeeded', 'a finished job stays as it was');
    assert.equal((await store.jobs.find('job_b1'))!.status, 'queued', "another account's job is left alone");
    assert.equal(await store.jobs.renew('job_a2', 'p1', now + 60_000), false, 'its run loses its lease');
    assert.deepEqual(await store.jobs.cancelAccount(a.id, at(21), error), []);
  });

  test(`${name} store: a claim is taken by exactly one claimer; its lease, items and outcome bind only its owner`, async (t) => {
    const store = await opened(t);
    const other = await store.reopen();
    // Same database, another connection (another process's view on PostgreSQL).
    t.after(() => other.close());
    const a = await account(store, 'a@example.com', 'pro');
    await job(store, 'job_1', a.id, 1);
    const now = Date.parse(at(10));
    assert.deepEqual(await store.jobs.claimable(now, 10), [{ id: 'job_1', account_id: a.id, plan: 'pro' }]);
    const claims = await Promise.all([
      store.jobs.claim('job_1', 'p1', now, now + 30_000, at(10)),
      other.jobs.claim('job_1', 'p2', now, now + 30_000, at(10)),
      store.jobs.claim('job_1', 'p3', now, now + 30_000, at(10)),
    ]);
    const winners = claims.filter((c) => c !== undefined);
    assert.equal(winners.length, 1);
    const owner = winners[0]!.lease_owner!;
    assert.equal(winners[0]!.status, 'running');
    assert.equal(winners[0]!.attempts, 1);
    assert.deepEqual(await store.jobs.claimable(now, 10), [], 'a running job on a live lease is not claimable');
    const loser = owner === 'p1' ? 'p2' : 'p1';
    assert.equal(await store.jobs.addItems('job_1', loser, batchOf([{ seq: 1, index: 0, item: '"x"' }]), 1), false);
    assert.equal(await store.jobs.addItems('job_1', owner, batchOf([{ seq: 1, index: 2, item: '{"p":3}' }, { seq: 2, index: 0, item: '{"p":1}' }]), 2), true);
    assert.equal(await store.jobs.addItems('job_1', owner, batchOf([{ seq: 3, index: 1, item: '{"p":2}' }]), 3), true);
    const all = [{ seq: 1, index: 2, item: '{"p":3}' }, { seq: 2, index: 0, item: '{"p":1}' }, { seq: 3, index: 1, item: '{"p":2}' }];
    assert.deepEqual(itemsOf(await store.jobs.itemBatches('job_1', 0, 10)), all);
    // A read after seq 1 gets the batch that holds seq 2 (and seq 1 with it), then the next.
    assert.deepEqual(itemsOf(await store.jobs.itemBatches('job_1', 1, 10), 1), all.slice(1));
    assert.deepEqual((await store.jobs.itemBatches('job_1', 2, 10)).map((b) => [b.first_seq, b.last_seq]), [[3, 3]]);
    assert.deepEqual((await store.jobs.itemBatches('job_1', 0, 1)).map((b) => [b.first_seq, b.last_seq]), [[1, 2]], 'at most `limit` batches');
    assert.deepEqual(await store.jobs.itemBatches('job_1', 3, 10), []);
    assert.equal((await store.jobs.find('job_1'))!.progress_done, 3);
    assert.equal(await store.jobs.renew('job_1', loser, now + 60_000), false);
    assert.equal(await store.jobs.renew('job_1', owner, now + 60_000), true);

    // The lease lapses (the owner died): another claimer takes the job over, with its items,
    // progress and first start kept (its run goes on from them).
    const later = now + 61_000;
    assert.deepEqual((await store.jobs.claimable(later, 10)).map((c) => c.id), ['job_1']);
    const retaken = await other.jobs.claim('job_1', 'p9', later, later + 30_000, at(40));
    assert.equal(retaken?.lease_owner, 'p9');
    assert.equal(retaken?.attempts, 2);
    assert.equal(retaken?.progress_done, 3);
    assert.equal(retaken?.started_at, at(10));
    assert.deepEqual(itemsOf(await store.jobs.itemBatches('job_1', 0, 10)), all);
    const outcome = { status: 'succeeded' as const, result: '[1]', error: null, finished_at: at(50), progress_done: 4 };
    const last = batchOf([{ seq: 4, index: 3, item: '{"p":4}' }]);
    assert.equal(await store.jobs.finish('job_1', owner, outcome, last), false, 'the old owner writes nothing');
    assert.deepEqual(itemsOf(await store.jobs.itemBatches('job_1', 0, 10)), all, 'not even its last items');
    assert.equal(await store.jobs.finish('job_1', 'p9', outcome, last), true);
    assert.deepEqual(itemsOf(await store.jobs.itemBatches('job_1', 0, 10)), [...all, { seq: 4, index: 3, item: '{"p":4}' }], 'the last items go with the outcome');
    const done = (await store.jobs.find('job_1'))!;
    assert.equal(done.status, 'succeeded');
    assert.equal(done.result, '[1]');
    assert.equal(done.lease_owner, null);
    assert.equal(await store.jobs.cancel('job_1', a.id, at(60)), false, 'a finished job is not cancelled');
  });

  test(`${name} store: a yielded turn leaves the job running but claimable at once, not counted as running`, async (t) => {
    const store = await opened(t);
    const a = await account(store, 'a@example.com', 'pro');
    const b = await account(store, 'b@example.com', 'free');
    await job(store, 'job_a1', a.id, 1);
    await job(store, 'job_a2', a.id, 2);
    await job(store, 'job_b1', b.id, 3);
    const now = Date.parse(at(10));
    for (const id of ['job_a1', 'job_a2']) await store.jobs.claim(id, 'p1', now, now + 30_000, at(10));
    assert.deepEqual(await store.jobs.runningCounts(now, [a.id, b.id]), new Map([[a.id, 2]]));
    assert.equal(await store.jobs.addItems('job_a1', 'p1', batchOf([{ seq: 1, index: 0, item: '1' }]), 1), true);
    assert.equal(await store.jobs.yieldTurn('job_a1', 'p2'), false, 'only its owner gives its turn');
    assert.equal(await store.jobs.yieldTurn('job_a1', 'p1'), true);
    const row = (await store.jobs.find('job_a1'))!;
    assert.deepEqual([row.status, row.lease_owner, row.progress_done], ['running', null, 1]);
    assert.equal(await store.jobs.addItems('job_a1', 'p1', batchOf([{ seq: 2, index: 1, item: '2' }]), 2), false, 'its run writes nothing more');
    assert.deepEqual(await store.jobs.runningCounts(now, [a.id, b.id]), new Map([[a.id, 1]]));
    // The waiting account first (it runs none), then the yielded job.
    assert.deepEqual((await store.jobs.claimable(now, 10)).map((c) => c.id), ['job_b1', 'job_a1']);
    const again = await store.jobs.claim('job_a1', 'p3', now + 1, now + 30_000, at(20));
    assert.deepEqual([again?.status, again?.started_at, again?.progress_done], ['running', at(10), 1]);
  });

  test(`${name} store: release gives a running job back; purge removes old jobs and their items`, async (t) => {
    const store = await opened(t);
    const a = await account(store, 'a@example.com');
    await job(store, 'job_old', a.id, 1);
    await job(store, 'job_new', a.id, 30);
    const now = Date.parse(at(40));
    await store.jobs.claim('job_old', 'p1', now, now + 30_000, at(40));
    await store.jobs.addItems('job_old', 'p1', batchOf([{ seq: 1, index: 0, item: '1' }]), 1);
    assert.equal(await store.jobs.release('job_old', 'p1'), true);
    assert.equal((await store.jobs.find('job_old'))!.status, 'queued');
    assert.equal(await store.jobs.purge(at(10)), 1);
    assert.equal(await store.jobs.find('job_old'), undefined);
    assert.deepEqual(await store.jobs.itemBatches('job_old', 0, 10), []);
    assert.ok(await store.jobs.find('job_new'));
  });

  test(`${name} store: jobs are counted by status, every status named, each count stopping at the cap`, async (t) => {
    const store = await opened(t);
    const a = await account(store, 'a@example.com');
    assert.deepEqual(await store.jobs.countByStatus(100), { queued: 0, running: 0, succeeded: 0, failed: 0, cancelled: 0 });
    for (const [i, id] of ['j1', 'j2', 'j3', 'j4'].entries()) await job(store, id, a.id, i + 1);
    const now = Date.parse(at(40));
    await store.jobs.claim('j1', 'p1', now, now + 30_000, at(40));
    await store.jobs.claim('j2', 'p1', now, now + 30_000, at(40));
    assert.equal(await store.jobs.finish('j2', 'p1', { status: 'succeeded', result: '[]', error: null, finished_at: at(41), progress_done: 3 }), true);
    assert.equal(await store.jobs.cancel('j3', a.id, at(42)), true);
    assert.deepEqual(await store.jobs.countByStatus(100), { queued: 1, running: 1, succeeded: 1, failed: 0, cancelled: 1 });
    for (const id of ['j5', 'j6', 'j7']) await job(store, id, a.id, 9);
    assert.deepEqual(await store.jobs.countByStatus(2), { queued: 2, running: 1, succeeded: 1, failed: 0, cancelled: 1 });
  });
}
