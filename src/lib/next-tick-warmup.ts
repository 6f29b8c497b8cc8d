/**
 * Node's own `process.nextTick` can settle, for a whole process, into a mode where each call
 * costs about 300 ns instead of 90: its tick-object literal (`{[async_id_symbol]: …}`) then goes
 * through V8's generic runtime path on every call instead of optimised code. Node's HTTP code
 * calls nextTick six to eight times per request, so such a server process spends 2–3 µs more on
 * every request, for its whole life. Measured on this project's benchmark server: without a
 * warm-up, 7 of 9 processes settled slow (~300 ns per call); calling nextTick in bulk before the
 * application's modules load, 9 of 9 settled fast (~90 ns). The same warm-up after the modules
 * had loaded did not help (4 of 5 slow), so this runs first, before anything else is imported.
 * The cause inside V8 was not pinned down; see BENCHMARKS.md.
 *
 * Kept for its figure (issue 25, bench/auth-overhead.ts, BENCH_ROUNDS=3, same run): GET /api/user
 * 5904 vs 4162 req/s without it, auth + envelope 6706 vs 5848 (server CPU 24.7 vs 27.8 µs and
 * 18.3 vs 19.7 µs per request), on a loaded machine.
 */
export const WARMUP_ROUNDS = 50;
export const WARMUP_TICKS_PER_ROUND = 2_000;

const noop = (): void => {};

/** Calls process.nextTick WARMUP_ROUNDS × WARMUP_TICKS_PER_ROUND times, letting each round run. */
export async function warmUpNextTick(): Promise<number> {
  let calls = 0;
  for (let round = 0; round < WARMUP_ROUNDS; round++) {
    await new Promise<void>((resolve) => {
      for (let i = 0; i < WARMUP_TICKS_PER_ROUND; i++) process.nextTick(noop);
      calls += WARMUP_TICKS_PER_ROUND;
      process.nextTick(resolve);
    });
  }
  return calls;
}
