import assert from 'node:assert/strict';
import { test } from 'node:test';
import { headlineWindow, type RateLimiter, type WindowLimits, type WindowSeed } from '../../../src/domain/usage/rate-limit.js';

/**
 * The rate limiter contract, run against every backend (memory, Redis). `make` returns a fresh
 * limiter whose counters start empty; `makeSecond`, where given, shares the first one's state
 * as a second server instance would.
 */
export function rateLimiterSuite(
  name: string,
  make: () => Promise<RateLimiter>,
  makeSecond?: () => Promise<RateLimiter>,
  /** A limiter whose windows it has not seen start from `seed` (the recorded usage). */
  makeSeeded?: (seed: WindowSeed) => Promise<RateLimiter>,
): void {
  const FREE: WindowLimits = { minute: 10, hour: 100, day: 500 };
  // 2026-03-04 05:06:00 UTC, a minute boundary
  const T0 = Date.UTC(2026, 2, 4, 5, 6, 0);
  let n = 0;
  const key = () => `${name}-${process.pid}-${Date.now()}-${n++}`;

  test(`${name}: N concurrent requests against a limit of L admit exactly min(N, L)`, async (t) => {
    const limiter = await make();
    t.after(() => limiter.close());
    for (const [requests, limit] of [[50, 10], [5, 10], [100, 100], [30, 1]] as const) {
      const k = key();
      const limits = { minute: limit, hour: 1000, day: 10000 };
      const decisions = await Promise.all(Array.from({ length: requests }, () => limiter.consume(k, limits, T0 + 1000)));
      assert.equal(decisions.filter((d) => d.allowed).length, Math.min(requests, limit), `${requests} against ${limit}`);
      const counts = decisions.filter((d) => d.allowed).map((d) => d.windows[0]!.used).sort((a, b) => a - b);
      assert.deepEqual(counts, Array.from({ length: Math.min(requests, limit) }, (_, i) => i + 1), 'each admitted request got its own count');
    }
  });

  test(`${name}: concurrent requests of one key across a minute boundary or with other limits are each decided by their own windows`, async (t) => {
    const limiter = await make();
    t.after(() => limiter.close());
    const k = key();
    const small = { minute: 2, hour: 1000, day: 10000 };
    const large = { minute: 3, hour: 1000, day: 10000 };
    const decisions = await Promise.all([
      ...Array.from({ length: 4 }, () => limiter.consume(k, small, T0 + 59_999)),
      ...Array.from({ length: 4 }, () => limiter.consume(k, small, T0 + 60_000)),
      ...Array.from({ length: 4 }, () => limiter.consume(k, large, T0 + 60_001)),
    ]);
    const allowed = (from: number) => decisions.slice(from, from + 4).filter((d) => d.allowed).length;
    assert.equal(allowed(0), 2, 'the first minute admits its 2');
    // The next minute: 2 at its small limit and 1 more at the larger one, in whichever order they ran.
    assert.equal(allowed(4) + allowed(8), 3);
    assert.ok(allowed(4) <= 2);
    const hours = decisions.filter((d) => d.allowed).map((d) => d.windows[1]!.used).sort((a, b) => a - b);
    assert.deepEqual(hours, [1, 2, 3, 4, 5], 'each admitted request got its own count in the hour');
    for (const d of decisions.filter((d) => !d.allowed)) assert.equal(d.exceeded?.window, 'minute');
  });

  test(`${name}: refusals count nothing; the minute window resets on the UTC minute`, async (t) => {
    const limiter = await make();
    t.after(() => limiter.close());
    const k = key();
    for (let i = 0; i < 10; i++) assert.equal((await limiter.consume(k, FREE, T0 + i * 1000)).allowed, true);
    const refused = await limiter.consume(k, FREE, T0 + 59_999);
    assert.equal(refused.allowed, false);
    assert.equal(refused.exceeded?.window, 'minute');
    assert.equal(refused.exceeded?.resetAt, T0 + 60_000);
    assert.deepEqual(refused.windows.map((w) => w.used), [10, 10, 10], 'a refusal is not counted');
    const next = await limiter.consume(k, FREE, T0 + 60_000);
    assert.equal(next.allowed, true);
    assert.deepEqual(next.windows.map((w) => w.used), [1, 11, 11]);
    assert.deepEqual((await limiter.peek(k, FREE, T0 + 60_001)).map((w) => w.used), [1, 11, 11], 'peek counts nothing');
  });

  test(`${name}: the hour window bites when the minute one does not, then the day window`, async (t) => {
    const limiter = await make();
    t.after(() => limiter.close());
    const k = key();
    const limits = { minute: 10, hour: 25, day: 40 };
    const hour0 = Date.UTC(2026, 2, 4, 5, 0, 0);
    let admitted = 0;
    for (let minute = 0; minute < 4; minute++) {
      for (let i = 0; i < 10; i++) if ((await limiter.consume(k, limits, hour0 + minute * 60_000 + i)).allowed) admitted++;
    }
    assert.equal(admitted, 25, 'the hour allows 25 though the minutes would allow 40');
    const refused = await limiter.consume(k, limits, hour0 + 5 * 60_000);
    assert.equal(refused.allowed, false);
    assert.equal(refused.exceeded?.window, 'hour');
    assert.equal(refused.exceeded?.resetAt, hour0 + 3_600_000);
    assert.equal(refused.windows[0]!.remaining, 10, 'the minute itself had room');
    assert.equal(headlineWindow(refused).window, 'hour');

    // next hour: 15 more fit in the day
    const hour1 = hour0 + 3_600_000;
    let more = 0;
    for (let minute = 0; minute < 3; minute++) {
      for (let i = 0; i < 10; i++) if ((await limiter.consume(k, limits, hour1 + minute * 60_000 + i)).allowed) more++;
    }
    assert.equal(more, 15);
    const dayRefusal = await limiter.consume(k, limits, hour1 + 10 * 60_000);
    assert.equal(dayRefusal.exceeded?.window, 'day');
    assert.equal(dayRefusal.exceeded?.resetAt, Date.UTC(2026, 2, 5));
    // the next UTC day starts afresh
    assert.equal((await limiter.consume(k, limits, Date.UTC(2026, 2, 5, 0, 0, 1))).allowed, true);
  });

  test(`${name}: headline window is the one with the fewest remaining, ties to the shortest`, async (t) => {
    const limiter = await make();
    t.after(() => limiter.close());
    const k = key();
    const first = await limiter.consume(k, { minute: 10, hour: 10, day: 500 }, T0);
    assert.equal(headlineWindow(first).window, 'minute', 'tie between minute and hour goes to the minute');
    const second = await limiter.consume(k, { minute: 10, hour: 5, day: 500 }, T0 + 1);
    assert.equal(headlineWindow(second).window, 'hour');
    assert.equal(headlineWindow(second).remaining, 3);
  });

  test(`${name}: keys are independent`, async (t) => {
    const limiter = await make();
    t.after(() => limiter.close());
    const a = key();
    const b = key();
    for (let i = 0; i < 10; i++) await limiter.consume(a, FREE, T0);
    assert.equal((await limiter.consume(a, FREE, T0)).allowed, false);
    assert.equal((await limiter.consume(b, FREE, T0)).allowed, true);
  });

  if (makeSeeded) {
    test(`${name}: a key it has not seen starts every window from the recorded usage, and admission stays exact`, async (t) => {
      const recorded = new Map<string, { minute: number; hour: number; day: number }>();
      const asked: string[] = [];
      const limiter = await makeSeeded(async (k) => {
        asked.push(k);
        return recorded.get(k) ?? { minute: 0, hour: 0, day: 0 };
      });
      t.after(() => limiter.close());
      const busy = key();
      recorded.set(busy, { minute: 7, hour: 40, day: 200 });
      const now = T0 + 30_000;
      const decisions = await Promise.all(Array.from({ length: 10 }, () => limiter.consume(busy, FREE, now)));
      assert.equal(decisions.filter((d) => d.allowed).length, 3, 'the minute had 3 of its 10 left');
      const refused = decisions.find((d) => !d.allowed)!;
      assert.equal(refused.exceeded?.window, 'minute');
      assert.deepEqual(refused.windows.map((w) => w.used), [10, 43, 203], 'every window counts on top of the recorded calls');
      assert.ok(asked.includes(busy));

      // The next minute starts empty; the hour and day go on. A window the limiter already has
      // is not lowered by what was recorded (calls in flight are not recorded yet).
      recorded.set(busy, { minute: 0, hour: 0, day: 0 });
      const next = await limiter.consume(busy, FREE, now + 60_000);
      assert.equal(next.allowed, true);
      assert.deepEqual(next.windows.map((w) => w.used), [1, 44, 204]);

      const hourFull = key();
      recorded.set(hourFull, { minute: 0, hour: FREE.hour, day: FREE.hour });
      const h = await limiter.consume(hourFull, FREE, now);
      assert.equal(h.allowed, false);
      assert.equal(h.exceeded?.window, 'hour', 'a restart mid-hour hands out no fresh hour');
    });
  }

  if (makeSecond) {
    test(`${name}: two instances sharing the backend admit exactly min(N, L) between them`, async (t) => {
      const one = await make();
      const two = await makeSecond();
      t.after(async () => {
        await one.close();
        await two.close();
      });
      const k = key();
      const decisions = await Promise.all(
        Array.from({ length: 60 }, (_, i) => (i % 2 ? one : two).consume(k, { minute: 25, hour: 1000, day: 1000 }, T0)),
      );
      assert.equal(decisions.filter((d) => d.allowed).length, 25);
      const counts = decisions.filter((d) => d.allowed).map((d) => d.windows[0]!.used).sort((a, b) => a - b);
      assert.deepEqual(counts, Array.from({ length: 25 }, (_, i) => i + 1), 'each admitted request got its own count, across instances');
    });
  }
}
