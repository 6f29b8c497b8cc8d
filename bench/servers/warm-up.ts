import { warmUpNextTick } from '../../src/lib/next-tick-warmup.js';

/**
 * Imported first by the benchmark servers (bare Fastify too), so they start like `netdiag serve` does.
 * BENCH_NO_WARMUP=1 leaves it out (the trick's A/B in bench/auth-overhead.ts).
 */
if (!process.env.BENCH_NO_WARMUP) await warmUpNextTick();
