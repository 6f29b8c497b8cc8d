import { warmUpNextTick } from '../../src/lib/next-tick-warmup.js';

/** Imported first by the benchmark servers (bare Fastify too), so they start like `netdiag serve` does. */
await warmUpNextTick();
