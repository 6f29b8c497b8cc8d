import { warmUpNextTick } from '../../src/runtime/next-tick-warmup.js';

/** Imported first by the benchmark's netdiag server, so it starts like `netdiag serve` does. */
await warmUpNextTick();
