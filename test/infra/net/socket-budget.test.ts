import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { SocketBudget } from '../../../src/domain/socket-budget.js';

/** Lets granted promises settle. */
const ticks = async (n = 5): Promise<void> => {
  for (let i = 0; i < n; i++) await new Promise((r) => setImmediate(r));
};

/** Acquires and records, in `log`, the order grants arrive in. */
function take(l: SocketBudget, owner: string | undefined, log: string[], name: string, signal?: AbortSignal): Promise<() => void> {
  return l.acquire(signal, owner).then((release) => {
    log.push(name);
    return release;
  });
}

describe('SocketBudget', () => {
  test('without owners: a FIFO queue, the slot passed straight to the next waiter', async () => {
    const l = new SocketBudget(1);
    const log: string[] = [];
    const first = await take(l, undefined, log, 'a');
    const rest = ['b', 'c', 'd'].map((n) => take(l, undefined, log, n));
    assert.equal(l.waiting, 3);
    first();
    first(); // twice is once
    (await rest[0]!)();
    (await rest[1]!)();
    (await rest[2]!)();
    assert.deepEqual(log, ['a', 'b', 'c', 'd']);
    assert.equal(l.active, 0);
    assert.equal(l.waiting, 0);
  });

  test('tryAcquire takes a slot only when acquire would grant it at once, and never ahead of a waiter', async () => {
    const l = new SocketBudget(3, { maxPerOwner: 2 });
    const a1 = l.tryAcquire('A')!;
    const a2 = l.tryAcquire('A')!;
    assert.equal(l.tryAcquire('A'), null, 'A is at its cap: nothing taken');
    assert.equal(l.active, 2);
    const log: string[] = [];
    const queued = take(l, 'A', log, 'A3');
    const b1 = l.tryAcquire('B');
    assert.ok(b1, 'B is under its cap and a slot is free');
    assert.equal(l.tryAcquire('C'), null, 'the budget is full');
    a1();
    await ticks();
    assert.deepEqual(log, ['A3'], "the freed slot went to A's waiter, not to a later tryAcquire");
    assert.equal(l.tryAcquire('C'), null);
    a2();
    b1();
    (await queued)();
    assert.equal(l.active, 0);
    assert.equal(typeof l.tryAcquire(), 'function', 'without an owner too');
  });

  test("a freed slot goes to the owner holding the fewest: B's first before A's queued thousandth", async () => {
    const l = new SocketBudget(4);
    const log: string[] = [];
    const held = await Promise.all([0, 1, 2, 3].map((i) => take(l, 'A', log, `A${i}`)));
    const queuedA = Array.from({ length: 1_000 }, (_, i) => take(l, 'A', log, `A${i + 4}`));
    const b = take(l, 'B', log, 'B0');
    assert.equal(l.waiting, 1_001);
    held[0]!();
    await ticks();
    assert.deepEqual(log.slice(4), ['B0'], 'B is served at the first release, ahead of A');
    assert.equal(l.heldBy('B'), 1);
    held[1]!();
    await ticks();
    assert.deepEqual(log.slice(4), ['B0', 'A4'], 'then A again, in its own order');
    (await b)();
    for (const r of held.slice(2)) r();
    for (const p of queuedA) (await p)();
    assert.equal(l.active, 0);
    assert.equal(l.heldBy('A'), 0);
  });

  test('maxPerOwner: one owner alone never fills the budget, so another is served at once', async () => {
    const l = new SocketBudget(4, { maxPerOwner: 3 });
    const log: string[] = [];
    const a = await Promise.all([0, 1, 2].map((i) => take(l, 'A', log, `A${i}`)));
    const a3 = take(l, 'A', log, 'A3');
    await ticks();
    assert.deepEqual(log, ['A0', 'A1', 'A2'], 'A waits at its cap with a slot still free');
    assert.equal(l.active, 3);
    const b = await take(l, 'B', log, 'B0');
    assert.equal(l.active, 4);
    // A freed slot of B's: A is still at its cap, so the slot stays free.
    b();
    await ticks();
    assert.equal(l.active, 3);
    assert.deepEqual(log, ['A0', 'A1', 'A2', 'B0']);
    // One of A's own: now A may take another.
    a[0]!();
    (await a3)();
    assert.deepEqual(log, ['A0', 'A1', 'A2', 'B0', 'A3']);
    a[1]!();
    a[2]!();
    assert.equal(l.active, 0);
  });

  test('a reserve: however many owners flood (each holding its few), a newcomer holding nothing is granted at once', async () => {
    // Any number of them, as long as each can hold its few: 6 unreserved slots, 1 each, up to 6
    // (more, and they are newcomers themselves, first in line like E).
    for (const flooders of [1, 2, 4, 6]) {
      const l = new SocketBudget(8, { maxPerOwner: 6, reservedBelow: 1 });
      const log: string[] = [];
      const granted: Array<() => void> = [];
      // Each flooder asks for 30 slots, more than there are. Arriving with none, each is a
      // newcomer too and may take a reserved slot; once their first connects have timed out (two
      // rounds of releases here), each holds some and together they hold the 6 unreserved slots.
      const asked = Array.from({ length: flooders }, (_, f) =>
        Array.from({ length: 30 }, (_, i) =>
          take(l, `F${f}`, log, `F${f}.${i}`).then((release) => {
            granted.push(release);
            return release;
          }),
        ),
      );
      for (let round = 0; round < 2; round++) {
        await ticks();
        for (const release of granted.splice(0)) release();
      }
      await ticks();
      assert.equal(l.active, 6, `${flooders} flooder(s) hold the 6 unreserved slots`);
      // No slot is released from here on: the newcomer's grant comes from the reserve.
      const e = await take(l, 'E', log, 'E0');
      assert.equal(l.heldBy('E'), 1);
      assert.equal(l.active, 7);
      // E holds one now, no longer "few" (reservedBelow 1): its second waits like anyone's...
      const e1 = take(l, 'E', log, 'E1');
      await ticks();
      assert.equal(l.heldBy('E'), 1, 'E waits once it holds its few');
      // ...while another newcomer still finds the last reserved slot.
      const g = await take(l, 'G', log, 'G0');
      assert.equal(l.active, 8);
      // E's release goes to a waiter that may take a reserved slot (E itself, holding none now),
      // never to a flooder: the reserve stays the newcomers'.
      e();
      (await e1)();
      g();
      await ticks();
      assert.equal(l.active, 6, 'freed reserved slots stay free while only flooders wait');
      // Drain: every release hands a slot on until everyone was served.
      await Promise.all(asked.flat().map(async (p) => (await p)()));
      assert.equal(l.active, 0);
      assert.equal(l.waiting, 0);
    }
  });

  test('a reserve: below it freed slots go to the fewest held, within it only to owners holding few', async () => {
    const l = new SocketBudget(6, { maxPerOwner: 4, reservedBelow: 1 });
    const log: string[] = [];
    const a = await Promise.all([0, 1, 2, 3].map((i) => take(l, 'A', log, `A${i}`)));
    const a45 = [4, 5].map((i) => take(l, 'A', log, `A${i}`));
    const b0 = await take(l, 'B', log, 'B0');
    const b1 = take(l, 'B', log, 'B1');
    await ticks();
    assert.deepEqual(log, ['A0', 'A1', 'A2', 'A3', 'B0'], 'A stops at the reserve, B (holding none) takes a reserved slot');
    // 4 active after this release: the slot is a reserved one, and neither A (3) nor B (1) holds few.
    a[0]!();
    await ticks();
    assert.equal(l.active, 4);
    assert.deepEqual(log, ['A0', 'A1', 'A2', 'A3', 'B0']);
    // 3 active: room below the reserve, and the fewest held wins: B (1) before A (2)...
    a[1]!();
    await ticks();
    assert.deepEqual(log.slice(5), ['B1']);
    // ...then A (1) before B (2), and A again when B's first goes.
    a[2]!();
    await ticks();
    assert.deepEqual(log.slice(5), ['B1', 'A4']);
    b0();
    await ticks();
    assert.deepEqual(log.slice(5), ['B1', 'A4', 'A5']);
    assert.equal(l.active, 4);
    (await b1)();
    a[3]!();
    for (const p of a45) (await p)();
    assert.equal(l.active, 0);
    assert.equal(l.waiting, 0);
  });

  test('an aborted waiter leaves its queue and is never granted', async () => {
    const l = new SocketBudget(1);
    const log: string[] = [];
    const first = await take(l, 'A', log, 'A0');
    const ac = new AbortController();
    const gone = take(l, 'B', log, 'B0', ac.signal);
    const next = take(l, 'C', log, 'C0');
    ac.abort(new Error('client gone'));
    await assert.rejects(gone, /client gone/);
    assert.equal(l.waiting, 1);
    first();
    (await next)();
    assert.deepEqual(log, ['A0', 'C0']);
    assert.equal(l.active, 0);
    await assert.rejects(l.acquire(ac.signal, 'B'), /client gone/);
  });

  test('bad options are programming errors', () => {
    assert.throws(() => new SocketBudget(0), RangeError);
    assert.throws(() => new SocketBudget(2, { maxPerOwner: 0 }), RangeError);
    assert.equal(new SocketBudget(2, { maxPerOwner: 5 }).maxPerOwner, 2);
    assert.throws(() => new SocketBudget(2, { maxPerOwner: 1, reservedBelow: 0 }), RangeError);
    assert.equal(new SocketBudget(4, { maxPerOwner: 3, reservedBelow: 5 }).reservedBelow, 3);
  });
});
