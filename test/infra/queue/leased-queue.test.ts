import assert from 'node:assert/strict';
import { test } from 'node:test';
import { LeasedQueue, takeInTurn, type LeasedWork } from '../../../src/infra/queue/index.js';
import { LeaseLostError, QueueClosingError } from '../../../src/errors.js';
import { eventually } from '../../helpers/eventually.js';

const turns = async (n = 20) => {
  for (let i = 0; i < n; i++) await new Promise((r) => setImmediate(r));
};

test('takeInTurn: an account at its limit is passed over for the rest of the look; stops when there is no room', async () => {
  const candidates = [
    { id: 'a1', account_id: 1 },
    { id: 'b1', account_id: 2 },
    { id: 'a2', account_id: 1 },
    { id: 'c1', account_id: 3 },
    { id: 'c2', account_id: 3 },
  ];
  const asked: string[] = [];
  const taken: string[] = [];
  const leftBehind = await takeInTurn(candidates, {
    room: () => taken.length < 5,
    skip: (c) => c.id === 'c2',
    take: async (c) => {
      asked.push(c.id);
      return c.account_id === 1 ? null : c.id;
    },
    taken: (t) => taken.push(t),
  });
  assert.deepEqual(asked, ['a1', 'b1', 'c1'], 'a2 is not asked about once a1 found account 1 full; c2 is skipped');
  assert.deepEqual(taken, ['b1', 'c1']);
  assert.equal(leftBehind, true);
  const noRoom = await takeInTurn(candidates, { room: () => false, skip: () => false, take: async () => 'x', taken: () => assert.fail() });
  assert.equal(noRoom, true);
  assert.equal(await takeInTurn([{ id: 'b1', account_id: 2 }], { room: () => true, skip: () => false, take: async () => 'b1', taken: () => undefined }), false);
});

test('LeasedQueue: a lost renewal aborts the run; close aborts the rest and gives their claims back', async () => {
  const due = ['x', 'y'];
  let held = true;
  const givenBack: Array<[string, unknown]> = [];
  const reasons = new Map<string, unknown>();
  const work: LeasedWork<string> = {
    idOf: (id) => id,
    claim: async (_holder, room, launch) => {
      while (room() > 0 && due.length > 0) launch(due.shift()!);
      return due.length > 0;
    },
    run: (id, _holder, signal) =>
      new Promise((resolve) =>
        signal.addEventListener('abort', () => {
          reasons.set(id, signal.reason);
          resolve(`${id} aborted`);
        }),
      ),
    renew: async (id) => id !== 'x' || held,
    giveBack: async (id, _holder, outcome) => void givenBack.push([id, outcome]),
  };
  const q = new LeasedQueue({ work, concurrency: 2, pollMs: 3_600_000, renewMs: 10, onError: (err) => assert.fail(err as Error) });
  q.start();
  await turns();
  assert.equal(q.size, 2);
  held = false;
  await eventually(() => reasons.has('x'), { intervalMs: 5, what: "x's run aborted" });
  assert.ok(reasons.get('x') instanceof LeaseLostError);
  await turns();
  assert.equal(q.size, 1);
  await q.close();
  assert.ok(reasons.get('y') instanceof QueueClosingError);
  assert.deepEqual(givenBack, [['y', 'y aborted']], 'only the run the close aborted is given back');
  assert.equal(q.size, 0);
});

test('LeasedQueue: chores run at the first look, then once per period, or at the next look when more waits', async () => {
  let now = 0;
  const ran: Array<[string, number]> = [];
  let more = 2;
  const q = new LeasedQueue<string>({
    work: { idOf: (id) => id, run: async () => undefined, giveBack: async () => undefined },
    concurrency: 1,
    pollMs: 3_600_000,
    now: () => now,
    chores: [
      { everyMs: 100, run: async (at) => void ran.push(['purge', at]) },
      { everyMs: 1_000, run: async (at) => (ran.push(['sweep', at]), more-- > 0) },
    ],
    onError: (err) => assert.fail(err as Error),
  });
  q.start();
  for (const at of [0, 50, 100, 150]) {
    now = at;
    q.kick();
    await turns();
  }
  await q.close();
  assert.deepEqual(ran, [
    ['purge', 0],
    ['sweep', 0],
    ['sweep', 0],
    ['sweep', 50],
    ['purge', 100],
  ]);
});
